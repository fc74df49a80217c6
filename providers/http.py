"""What every wire adapter shares: one aiohttp session, limits, retries, the breaker, redaction.

A wire module subclasses ``HttpChat`` and supplies the URL, headers, request
body and response parser; everything about waiting, retrying and classifying
happens here, the same way for every vendor.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import aiohttp
from yarl import URL

from providers.base import DEFAULT_MAX_OUTPUT, CallOptions, ChatResult
from providers.breaker import Breaker
from providers.constrain import AnswerSpace
from providers.errors import (ErrorClass, ProviderError, classify_exception, key_in_answer, safety_block,
                              status_error)
from providers.limits import OK, OTHER, THROTTLED, Limits
from providers.redact import Redactor, url_secrets
from providers.retry import after_first

# A server that has not accepted the connection by then is not coming: a connect failure
# (counted by the breaker), not a request timeout spent in full.
CONNECT_TIMEOUT_S = 10.0


class HttpChat:
    # Does the vendor's tokens-per-minute limiter charge max_tokens up front
    # (OpenAI does) or the output actually produced (Anthropic, Google)? It
    # decides how the estimate is corrected after the call.
    charges_max_output = False

    def __init__(self, *, url: str, headers: dict[str, str], api_key: str | None, max_output: int | None,
                 limits: Limits | None = None, timeout_s: float = 120.0, max_retries: int = 8,
                 max_connections: int = 64, backoff_base_s: float = 1.0, breaker: Breaker | None = None,
                 timeout_per_token_s: float = 0.0):
        self._url = url
        self._target = URL(url)  # parsed once, not on every request
        self._headers = headers
        self._redactor = Redactor([api_key, *url_secrets(url)])  # Basic credentials in the URL are secrets too
        self._max_output = max_output or DEFAULT_MAX_OUTPUT
        self._limits = limits or Limits()
        self._timeout_s = timeout_s
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=min(timeout_s, CONNECT_TIMEOUT_S))
        # Seconds added to the timeout per estimated token (prompt + max_tokens): a local server
        # evaluates a long prompt for minutes, and a request abandoned there is computed anyway.
        self._per_token_s = timeout_per_token_s
        self._breaker = breaker
        self._max_retries = max_retries
        self._max_connections = max_connections
        self._backoff_base_s = backoff_base_s
        self._session: aiohttp.ClientSession | None = None

    # -- what a wire module provides

    def request_body(self, messages: Sequence[Any], answer: AnswerSpace | None = None) -> bytes:
        """The request; ``answer`` is the item's answer space, sent when the model is constrained."""
        raise NotImplementedError

    def parse(self, raw: bytes) -> ChatResult:
        raise NotImplementedError

    def with_call(self, body: bytes, call: CallOptions) -> bytes:
        """The request with one call's body fields (``CallOptions``); a wire whose API takes none keeps it."""
        return body

    def pause_hint(self, headers: Mapping[str, str], est_tokens: int) -> float | None:
        """Seconds to hold this model back, from the response's rate-limit headers."""
        return None

    # -- read by the batch wires (providers/batch/http.py), which speak to the same endpoint

    @property
    def url(self) -> str:
        return self._url

    @property
    def headers(self) -> dict[str, str]:
        return dict(self._headers)

    @property
    def breaker(self) -> Breaker | None:
        return self._breaker

    @property
    def redactor(self) -> Redactor:
        return self._redactor

    @property
    def retry_settings(self) -> tuple[int, float]:
        """(max_retries, backoff_base_s)."""
        return self._max_retries, self._backoff_base_s

    # -- the shared machinery

    def _client(self) -> aiohttp.ClientSession:
        # Created lazily: a ClientSession must be made inside the running event loop.
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300)
            # The headers are the same on every request: the session's defaults, not a
            # per-request dict aiohttp would convert and merge each time.
            self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout, headers=self._headers)
        return self._session

    def estimate_tokens(self, body: bytes) -> int:
        # ~3 UTF-8 bytes a token: English runs ~4, Chinese 1 character (3 bytes)
        # or more; over-estimating is corrected after the call.
        return len(body) // 3 + self._max_output

    async def chat(self, messages: Sequence[Any], answer: AnswerSpace | None = None, *,
                   call: CallOptions | None = None) -> ChatResult:
        """One answer or one classified error; the only way out of the adapter, so the one
        place where the key is taken out of errors and kept from answers."""
        # One coroutine from the lane down to aiohttp where a call succeeds at once (most do): the
        # first attempt is made here, only a failed one goes through the retry machinery, and each
        # layer less is one frame less on every resumption of the request (bench/README.md).
        try:
            body = self.request_body(messages, answer)
            headers = None
            if call is not None:
                body, headers = self.with_call(body, call), call.headers or None
            est = self.estimate_tokens(body)
            t0 = time.perf_counter()
            first: ProviderError | None = None
            try:
                result, attempts = await self._once(body, est, headers), 1
            except ProviderError as e:
                first = e  # retried outside the handler: a retry's error is not chained to it
            if first is not None:
                result, attempts = await after_first(
                    first, lambda: self._once(body, est, headers), max_retries=self._max_retries,
                    base_s=self._backoff_base_s, breaker=self._breaker is not None)
            result.attempts = attempts
            result.latency_ms = (time.perf_counter() - t0) * 1000
            if self._redactor:
                leak = self._redactor.exposing_field(result)
                if leak is not None:
                    raise key_in_answer(leak)
            return result  # an answer is never altered (providers/redact.py)
        except ProviderError as e:
            raise self._redactor.error(e) from None
        except Exception as e:
            raise self._redactor.error(e)

    async def _once(self, body: bytes, est: int, headers: Mapping[str, str] | None = None) -> ChatResult:
        limits = self._limits
        breaker = self._breaker
        # Awaited only when they may hold the request (a coroutine apiece otherwise, for nothing).
        if breaker is not None and breaker.open:
            await breaker.admit()  # before the limits: a paused model holds no slot
        if not limits.try_acquire():
            await limits.acquire(est)
        sent_at = time.monotonic()
        outcome = OTHER
        # The session's timeout unless the prompt's length earns more (no per-request object then).
        timeout = aiohttp.ClientTimeout(total=self._timeout_s + est * self._per_token_s,
                                        sock_connect=min(self._timeout_s, CONNECT_TIMEOUT_S)
                                        ) if self._per_token_s else self._timeout
        try:
            try:
                async with self._client().post(self._target, data=body, timeout=timeout, headers=headers) as resp:
                    raw = await resp.read()
                    status = resp.status
                    got = resp.headers
            except Exception as e:  # noqa: BLE001 - classify_exception re-raises what is not a provider failure
                err = classify_exception(e)
                if breaker is not None and err.klass is ErrorClass.CONNECT:
                    breaker.failed(self._redactor.text(err.args[0]))  # it is printed in the summary
                raise err from None
            if breaker is not None:
                breaker.succeeded()
            if status != 200:
                text = raw[:4000].decode("utf-8", "replace")
                blocked = safety_block(status, text)
                if blocked is not None:
                    outcome = OK
                    return ChatResult(text="", finish_reason="blocked", blocked=blocked)
                err = status_error(status, text, got)
                if err.klass is ErrorClass.RATE_LIMIT:
                    outcome = THROTTLED
                    if err.retry_after:
                        limits.pause(err.retry_after)  # the whole model waits, not only this request
                raise err
            result = self.parse(raw)
            outcome = OK
        finally:
            limits.release(outcome, sent_at)
        hint = self.pause_hint(got, est)
        if hint:
            limits.pause(hint)
        if result.input_tokens is not None:
            used = result.input_tokens + (self._max_output if self.charges_max_output else (result.output_tokens or 0))
            limits.settle(used - est)
        return result

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
