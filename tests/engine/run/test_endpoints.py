"""engine/run/endpoints.py: the adapters imported when a run calls them, and warmed in a thread for a new file."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.integration.helpers import ROOT

# In a fresh interpreter: this repository's test process has long imported aiohttp.
CHILD = textwrap.dedent("""
    import sys, threading
    from engine.config.models import ModelConfig
    from engine.run import endpoints

    models = [ModelConfig(name="a", provider="openai", model="m"), ModelConfig(name="b", provider="anthropic", model="m")]
    before = "aiohttp" in sys.modules or "providers.openai" in sys.modules
    endpoints.warm_adapters(models)
    for t in threading.enumerate():
        if t.name == "import-adapters":
            t.join()
    print(before, all(m in sys.modules for m in ("aiohttp", "providers.openai", "providers.anthropic")),
          "providers.gemini" in sys.modules)
""")


def test_adapters_are_imported_when_asked_for_and_warmed_in_a_thread():
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # nothing of the HTTP client until asked; then the models' adapters, and only theirs
    assert out.stdout.split() == ["False", "True", "False"]
