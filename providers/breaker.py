"""A circuit breaker per endpoint: a dead server costs a bounded time, not every item's retries.

Requests tell the breaker how each attempt went (``failed`` on a connection
failure, ``succeeded`` on any HTTP answer). After ``threshold`` connection
failures in a row the breaker opens: new attempts wait in ``admit`` while one
of them probes the endpoint (a TCP connect, with TLS for https) with growing
pauses. A probe that connects closes the breaker and the waiting requests go.
If no request has had an answer for ``unreachable_after_s`` since the first
failure of the run, the breaker gives up: ``admit`` raises ``Unreachable``
for the rest of the run, and the lanes leave their items unasked.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
from yarl import URL

from providers.errors import Unreachable

DEFAULT_UNREACHABLE_AFTER_S = 60.0
THRESHOLD = 3  # connection failures in a row before the model is paused
FIRST_PROBE_S = 0.5  # pause before the first probe; doubles up to MAX_PROBE_S
MAX_PROBE_S = 8.0
PROBE_TIMEOUT_S = 10.0


async def tcp_probe(url: URL) -> bool:
    """Can a connection (and a TLS handshake, for https) be made to ``url``'s host and port?"""
    tls = url.scheme == "https"
    try:
        host, port = url.host or "", url.port or (443 if tls else 80)
        with anyio.fail_after(PROBE_TIMEOUT_S):
            stream: anyio.abc.ByteStream = (
                await anyio.connect_tcp(host, port, ssl_context=ssl.create_default_context()) if tls
                else await anyio.connect_tcp(host, port))
        await stream.aclose()
        return True
    except (OSError, TimeoutError, ssl.SSLError, anyio.BrokenResourceError):
        return False


class Breaker:
    def __init__(self, endpoint: str, *, unreachable_after_s: float = DEFAULT_UNREACHABLE_AFTER_S,
                 threshold: int = THRESHOLD, probe: Callable[[], Awaitable[bool]] | None = None,
                 notify: Callable[[str], None] | None = None):
        self.endpoint = endpoint
        self._notify = notify  # told when the endpoint stops and starts answering (a minute is long to wait silently)
        self.unreachable_after_s = unreachable_after_s
        self.threshold = threshold
        url = URL(endpoint)
        self._probe = probe or (lambda: tcp_probe(url))
        self.open = False
        self.given_up = False
        self.reason = ""  # the last connection failure, for the summary
        self._failures = 0  # in a row
        self._down_since: float | None = None  # first failure since the last answer
        self._recovered = False  # a probe connected since then, yet requests failed again
        self._lock: anyio.Lock | None = None  # made in the event loop, on first need

    async def admit(self) -> None:
        """Return when a request may go; raise Unreachable once the breaker has given up.

        Returns at once while ``open`` is False (given up implies open): a caller may check it first."""
        if not self.open:
            return
        if self._lock is None:
            self._lock = anyio.Lock()
        # The first waiter probes; the others queue on the lock and find it settled.
        async with self._lock:
            pause = FIRST_PROBE_S
            while self.open and not self.given_up:
                if self._recovered and time.monotonic() >= self._deadline():
                    self.given_up = True  # it accepts connections but requests still cannot connect
                    break
                left = self._deadline() - time.monotonic()
                await anyio.sleep(max(0.0, min(pause, left)))
                if await self._probe():
                    self.open, self._failures, self._recovered = False, 0, True
                elif time.monotonic() >= self._deadline():
                    self.given_up = True
                pause = min(pause * 2, MAX_PROBE_S)
        if self.given_up:
            raise Unreachable(self.endpoint, self.reason, self.unreachable_after_s)

    def failed(self, reason: str) -> None:
        """A connection failure (refused, DNS, TLS, connect timeout)."""
        self.reason = reason
        self._failures += 1
        if self._down_since is None:
            self._down_since = time.monotonic()
        if self._failures >= self.threshold and not self.open:
            self.open = True
            if self._notify is not None and not self._recovered:
                self._notify(f"{self.endpoint}: {reason}; its requests wait, and it is given up if nothing "
                             f"answers for {self.unreachable_after_s:g} s")

    def succeeded(self) -> None:
        """An HTTP answer of any status: the endpoint is there."""
        if self.given_up:
            return  # too late: the model's lanes have stopped
        if self._down_since is not None and self._notify is not None:
            self._notify(f"{self.endpoint}: answering again")
        self._recovered = False
        self._failures = 0
        self._down_since = None
        self.open = False

    def _deadline(self) -> float:
        return (self._down_since or time.monotonic()) + self.unreachable_after_s
