"""The circuit breaker: opens after a run of connection failures, lets requests go again once a
probe connects, gives the endpoint up when nothing answered for `unreachable_after_s`."""

import socket

import pytest
from yarl import URL

from providers.breaker import Breaker, tcp_probe
from providers.errors import Unreachable


class Probe:
    def __init__(self, *answers):
        self.answers, self.calls = list(answers), 0

    async def __call__(self):
        self.calls += 1
        return self.answers.pop(0) if self.answers else False


async def test_closed_until_a_run_of_failures_and_any_answer_resets_it():
    b = Breaker("http://h:1", probe=Probe())
    b.failed("refused")
    b.failed("refused")
    b.succeeded()
    b.failed("refused")
    b.failed("refused")
    assert not b.open
    await b.admit()  # no wait, no probe while closed
    b.failed("refused")
    assert b.open and not b.given_up


async def test_a_probe_that_connects_lets_the_waiting_requests_go():
    probe = Probe(False, True)
    b = Breaker("http://h:1", probe=probe, unreachable_after_s=30)
    for _ in range(3):
        b.failed("refused")
    await b.admit()
    await b.admit()
    assert probe.calls == 2 and not b.open and not b.given_up


async def test_gives_up_once_nothing_answered_for_the_bound():
    probe = Probe()
    b = Breaker("http://h:1", probe=probe, unreachable_after_s=0.2)
    for _ in range(3):
        b.failed("connection refused")
    with pytest.raises(Unreachable) as e:
        await b.admit()
    assert b.given_up and probe.calls >= 1 and "connection refused" in str(e.value)
    b.succeeded()  # a late answer does not revive a model whose lanes have stopped
    with pytest.raises(Unreachable):
        await b.admit()


async def test_connecting_probes_cannot_keep_a_failing_endpoint_alive_for_ever():
    """It accepts connections, yet requests cannot connect (say, a TLS mismatch): still bounded."""
    b = Breaker("http://h:1", probe=Probe(*[True] * 100), unreachable_after_s=0.3)
    with pytest.raises(Unreachable):
        while True:
            for _ in range(3):
                b.failed("tls")
            await b.admit()


async def test_the_tcp_probe_against_a_real_port():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert await tcp_probe(URL(f"http://127.0.0.1:{port}/v1"))
    assert not await tcp_probe(URL(f"http://127.0.0.1:{port}/v1"))  # closed now


async def test_an_adapter_on_a_closed_port_gives_up_through_its_breaker():
    from benchmark.dataset import Message
    from providers.errors import ErrorClass, ProviderError
    from tests.providers import test_openai

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    msgs = (Message("user", "hi"),)
    plain = test_openai.adapter(url, max_retries=1)  # no breaker: a connection failure is retried, then stored
    b = Breaker(url, unreachable_after_s=0.5)
    guarded = test_openai.adapter(url, max_retries=0, breaker=b)
    try:
        with pytest.raises(ProviderError) as e:
            await plain.chat(msgs)
        with pytest.raises(Unreachable):
            await guarded.chat(msgs)
    finally:
        await plain.aclose()
        await guarded.aclose()
    assert e.value.klass is ErrorClass.CONNECT and e.value.attempts == 2 and "Cannot connect" in str(e.value)
    assert b.given_up and "Cannot connect" in b.reason
