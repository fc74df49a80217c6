"""Classification of one failed request of a provider batch (providers/errors.py), and the batch factory."""

import pytest

from providers.errors import (ErrorClass, anthropic_request_error, batch_request_error, grpc_request_error,
                              unanswered)
from providers.limits import Limits
from providers.registry import BATCHABLE, make_batch_api, make_provider


@pytest.mark.parametrize("error, klass, status", [
    ({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}},
     ErrorClass.PERMANENT, 400),
    ({"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens > 200000 maximum"},
     ErrorClass.CONTEXT, 400),
    ({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, ErrorClass.TRANSIENT, 529),
    ({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, ErrorClass.RATE_LIMIT, 429),
    ({"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}, ErrorClass.TRANSIENT, 500),
])
def test_anthropic_errored_results(error, klass, status):
    err = anthropic_request_error(error)
    assert (err.klass, err.status) == (klass, status)


@pytest.mark.parametrize("status, klass", [
    ({"code": 3, "message": "Please use a valid role: user, model."}, ErrorClass.PERMANENT),
    ({"code": 3, "message": "The input token count (2000000) exceeds the maximum number of tokens allowed (1048576)."},
     ErrorClass.CONTEXT),
    ({"code": 13, "message": "internal"}, ErrorClass.TRANSIENT),
    ({"code": 14, "message": "unavailable"}, ErrorClass.TRANSIENT),
    ({"code": 8, "message": "Resource has been exhausted"}, ErrorClass.RATE_LIMIT),
    ({"code": "DEADLINE_EXCEEDED", "message": "late"}, ErrorClass.TRANSIENT),
])
def test_gemini_request_statuses(status, klass):
    assert grpc_request_error(status).klass is klass


def test_openai_error_file_lines():
    # A line with a response is classified by its status, like a synchronous answer.
    body = '{"error": {"message": "This model\'s maximum context length is 8192 tokens", "code": "context_length_exceeded"}}'
    assert batch_request_error(400, body).klass is ErrorClass.CONTEXT
    assert batch_request_error(500, '{"error": {"message": "boom"}}').klass is ErrorClass.TRANSIENT
    # A line without one: never attempted (retried) or refused.
    for code in ("batch_expired", "batch_cancelled"):
        err = batch_request_error(None, "not run", code)
        assert err.klass is ErrorClass.TRANSIENT and code in str(err)
    assert batch_request_error(None, "bad line", "invalid_request").klass is ErrorClass.PERMANENT
    assert batch_request_error(None, "oops", "server_error").klass is ErrorClass.TRANSIENT
    assert unanswered("expired").klass.retryable


def test_factory_names_the_batchable_providers():
    assert BATCHABLE == ("openai", "anthropic", "gemini")
    adapter = make_provider("local", base_url="http://127.0.0.1:1/v1", model="m", api_key=None, generation={},
                            limits=Limits(), timeout_s=1, max_retries=0, max_connections=1)
    with pytest.raises(ValueError, match="no batch API"):
        make_batch_api("local", adapter)
    assert make_batch_api("openai", adapter).provider == "openai"
