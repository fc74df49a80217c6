"""SafetyBench, category Offensiveness: 300 Chinese test questions (see benchmark/datasets/_safetybench.py)."""

from benchmark.datasets._safetybench import safetybench
from benchmark.registry import register

register(safetybench("off"))
