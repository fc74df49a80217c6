import time

import pytest

from providers.errors import ErrorClass, ProviderError
from providers.retry import with_retries


class Flaky:
    def __init__(self, errors):
        self.errors = list(errors)
        self.calls = 0

    async def __call__(self):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return "ok"


async def test_success_first_try():
    f = Flaky([])
    assert await with_retries(f, max_retries=3, base_s=0.001) == ("ok", 1)


async def test_transient_then_success_counts_attempts():
    f = Flaky([ProviderError(ErrorClass.TRANSIENT, "x"), ProviderError(ErrorClass.RATE_LIMIT, "y")])
    assert await with_retries(f, max_retries=3, base_s=0.001) == ("ok", 3)


async def test_permanent_is_not_retried():
    f = Flaky([ProviderError(ErrorClass.PERMANENT, "quota")])
    with pytest.raises(ProviderError) as e:
        await with_retries(f, max_retries=5, base_s=0.001)
    assert f.calls == 1 and e.value.attempts == 1


async def test_gives_up_after_max_retries():
    f = Flaky([ProviderError(ErrorClass.TRANSIENT, "x")] * 10)
    with pytest.raises(ProviderError) as e:
        await with_retries(f, max_retries=2, base_s=0.001)
    assert f.calls == 3 and e.value.attempts == 3


async def test_retry_after_is_honoured():
    f = Flaky([ProviderError(ErrorClass.RATE_LIMIT, "slow down", retry_after=0.3)])
    t0 = time.monotonic()
    assert (await with_retries(f, max_retries=2, base_s=0.001))[0] == "ok"
    assert time.monotonic() - t0 >= 0.3


async def test_connection_failures_use_no_retries_when_a_breaker_bounds_them():
    refused = [ProviderError(ErrorClass.CONNECT, "refused")] * 5
    assert await with_retries(Flaky(refused), max_retries=0, base_s=0.001, breaker=True) == ("ok", 6)
    f = Flaky(refused + [ProviderError(ErrorClass.TRANSIENT, "x")] * 3)
    with pytest.raises(ProviderError) as e:
        await with_retries(f, max_retries=1, base_s=0.001, breaker=True)
    assert f.calls == 7 and e.value.klass is ErrorClass.TRANSIENT  # 5 free, then 1 + 1 counted
    f = Flaky(refused)
    with pytest.raises(ProviderError):  # no breaker: a connection failure is a retry like any other
        await with_retries(f, max_retries=1, base_s=0.001)
    assert f.calls == 2
