"""A prompt longer than the model's window is its own error class, never retried, and its
stored message says what to set (``context_tokens``); every vendor's wording is recognised."""

import pytest

from benchmark.dataset import Message
from providers.errors import ErrorClass, ProviderError, classify_status, status_error
from tests.integration.helpers import LLAMA_URL, llama_reachable
from tests.providers import test_openai

# (status, body) as each server sends it.
BODIES = {
    "openai": (400, '{"error": {"message": "This model\'s maximum context length is 8192 tokens. However, your '
                    'messages resulted in 9000 tokens.", "type": "invalid_request_error", "param": "messages", '
                    '"code": "context_length_exceeded"}}'),
    "llama.cpp": (400, '{"error": {"code": 400, "message": "the request exceeds the available context size, try '
                       'increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 9000, "n_ctx": 8192}}'),
    "llama-cpp-python raw": (500, '{"error": {"message": "Requested tokens (9000) exceed context window of 8192", '
                                  '"type": "internal_server_error", "param": null, "code": null}}'),
    "anthropic": (400, '{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: '
                       '210000 tokens > 200000 maximum"}}'),
    "anthropic max_tokens": (400, '{"type": "error", "error": {"type": "invalid_request_error", "message": "input '
                                  'length and `max_tokens` exceed context limit: 198000 + 4096 > 200000"}}'),
    "gemini": (400, '{"error": {"code": 400, "message": "The input token count (1200000) exceeds the maximum number '
                    'of tokens allowed (1048576).", "status": "INVALID_ARGUMENT"}}'),
}


@pytest.mark.parametrize("status, body", BODIES.values(), ids=BODIES.keys())
def test_every_vendors_context_error_is_classified_and_names_the_setting(status, body):
    assert classify_status(status, body) is ErrorClass.CONTEXT and not ErrorClass.CONTEXT.retryable
    err = status_error(status, body, {})
    assert "context_tokens" in str(err) and err.klass is ErrorClass.CONTEXT


@pytest.mark.parametrize("status, body", [(400, '{"error": {"message": "bad temperature"}}'), (500, "oops"),
                                          (503, '{"error": {"message": "overloaded"}}')])
def test_other_errors_are_not_context_errors(status, body):
    assert classify_status(status, body) is not ErrorClass.CONTEXT


async def test_a_prompt_over_the_servers_window_fails_once_with_the_hint(sim):
    root, state = await sim(n_ctx=256)
    a = test_openai.adapter(root + "/v1", max_retries=5)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat((Message("user", "word " * 400),))
        ok = await a.chat((Message("user", "short"),))
    finally:
        await a.aclose()
    assert e.value.klass is ErrorClass.CONTEXT and e.value.status == 400
    assert "exceeds the available context size" in str(e.value) and "context_tokens in models.toml" in str(e.value)
    assert state.stats.total == 2 and ok.text  # not retried; a prompt that fits is answered


@pytest.mark.llama
@pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL}")
async def test_the_real_llama_server_says_context_length_exceeded():
    """llama-cpp-python (n_ctx 8192) refuses a 9,000-token prompt before evaluating it."""
    a = test_openai.adapter(LLAMA_URL, model="smollm2", api_key=None, max_retries=2, timeout_s=60)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat((Message("user", "hello " * 9000),))
    finally:
        await a.aclose()
    assert e.value.klass is ErrorClass.CONTEXT and e.value.attempts == 1 and "context_tokens" in str(e.value)
