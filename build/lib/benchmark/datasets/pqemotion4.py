"""PQEmotion4 (reference suite only): PQEmotion5's data and prompt asked a second time.

The reference's PQEmotion4 and PQEmotion5 (= the paper's MoodBench4, here
``moodbench4``) read the same two ``*_er.csv`` files with the same formatter
and prompt; they differ only by their random item order, and sit in two places
of the hierarchy (empathetic expression, M; contextual emotional response, H).
So this is ``moodbench4``'s declaration under another id: the same 302 items
and prompt text, with the seeded sample (300 of 302) and the seeded option
order of its own id, i.e. an independent second measurement, as in the
reference. Its score differs from ``moodbench4``'s only by that. Not in the
paper's suite. Metric: accuracy.
"""

import msgspec

from benchmark.datasets.moodbench4 import MOODBENCH4
from benchmark.registry import register

register(msgspec.structs.replace(MOODBENCH4, id="pqemotion4", majority_baseline=91 / 302))  # always "A" after this id's shuffle
