import asyncio

import aiohttp
import pytest

from providers.errors import ErrorClass, ProviderError, classify_exception, classify_status, parse_retry_after


@pytest.mark.parametrize(
    "status, body, klass",
    [
        (429, '{"error":{"code":"rate_limit_exceeded"}}', ErrorClass.RATE_LIMIT),
        (429, '{"error":{"code":"insufficient_quota"}}', ErrorClass.PERMANENT),
        (500, "", ErrorClass.TRANSIENT),
        (503, "", ErrorClass.TRANSIENT),
        (529, '{"type":"error","error":{"type":"overloaded_error"}}', ErrorClass.TRANSIENT),
        (408, "", ErrorClass.TRANSIENT),
        (400, '{"error":{"message":"bad"}}', ErrorClass.PERMANENT),
        (401, "", ErrorClass.PERMANENT),
        (404, "", ErrorClass.PERMANENT),
    ],
)
def test_classify_status(status, body, klass):
    assert classify_status(status, body) is klass


def test_classify_client_failures():
    assert classify_exception(asyncio.TimeoutError()).klass is ErrorClass.TRANSIENT
    assert classify_exception(aiohttp.ServerDisconnectedError()).klass is ErrorClass.TRANSIENT
    assert classify_exception(ConnectionResetError()).klass is ErrorClass.TRANSIENT
    with pytest.raises(ZeroDivisionError):  # our own bugs are not provider errors
        classify_exception(ZeroDivisionError())


def test_retryable():
    assert ErrorClass.RATE_LIMIT.retryable and ErrorClass.TRANSIENT.retryable
    assert not ErrorClass.PERMANENT.retryable


def test_retry_after_forms():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None
    assert parse_retry_after("garbage") is None
    assert 0 <= parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") <= 0.0 + 1e-9  # a past date: no wait


def test_error_text():
    assert str(ProviderError(ErrorClass.PERMANENT, "nope", status=400)) == "HTTP 400: nope"
