"""Transient faults in the Anthropic and Gemini wire formats are retried until the answer comes.

(The OpenAI adapter's version runs against a server in its own process: tests/providers/test_openai.py.)
"""

import pytest

from benchmark.dataset import Message
from tests.providers import test_anthropic, test_gemini

CASES = [pytest.param(test_anthropic.adapter, f, id=f"anthropic-{f}") for f in ("overloaded", "500", "malformed", "drop", "429")]
CASES += [pytest.param(test_gemini.adapter, f, id=f"gemini-{f}") for f in ("503", "500", "malformed", "drop", "429")]


@pytest.mark.parametrize("make, fault", CASES)
async def test_transient_faults_are_retried_until_success(sim, make, fault):
    root, state = await sim(faults={fault: 0.5}, seed=5, mode="gold")
    a = make(root, max_retries=12)
    try:
        results = [await a.chat((Message("user", f"q{i}\n[[gold:C]]"),)) for i in range(10)]
    finally:
        await a.aclose()
    assert all(r.text == "Answer: C" for r in results)
    assert sum(r.attempts for r in results) == state.stats.total > 10  # some were retried
