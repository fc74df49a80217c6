"""What the three batch wires share: control calls with retries, answers read by the adapter, redaction.

A batch wire (providers/batch/openai.py, batch_anthropic.py, batch_gemini.py)
speaks to the endpoint its synchronous adapter calls, with the adapter's
headers (so its key) and its retry settings, but through its own session: a
download may take far longer than a chat call, and a batch is not charged to
the model's synchronous rate limits. Every error and status text it hands back
goes through the adapter's ``Redactor``, and an answer holding the key is
refused, as ``HttpChat.chat`` does. Calls go through the endpoint's circuit
breaker (the adapter's), so a dead endpoint raises ``Unreachable`` as a
synchronous call does. Result files are read line by line as they arrive.
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import aiohttp
import anyio
import orjson

from providers.base import ChatResult
from providers.batch.core import BatchOutcome, BatchRequest, LostCreate, check_requests
from providers.breaker import Breaker
from providers.errors import (ErrorClass, ProviderError, classify_exception, key_in_answer, safety_block,
                              status_error, unanswered)
from providers.http import CONNECT_TIMEOUT_S, HttpChat
from providers.retry import MAX_BREAKER_CONNECT_RETRIES, retry_pause, with_retries

P = ParamSpec("P")
T = TypeVar("T")
Body = bytes | Callable[[], Any] | None  # a callable builds a fresh FormData for each attempt
JSON = {"Content-Type": "application/json"}
CHUNK = 1 << 16  # bytes read at a time from a download


def redacted(method: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Take the key out of whatever a control call raises (the method's ``self`` is a BatchHttp)."""

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        self = args[0]
        assert isinstance(self, BatchHttp)
        try:
            return await method(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - redacted, then raised as it is
            raise self._redactor.error(e) from None

    return wrapper


class BatchHttp:
    provider = ""
    max_requests = 0
    max_bytes = 0

    def __init__(self, adapter: HttpChat, *, timeout_s: float = 600.0, max_retries: int | None = None,
                 backoff_base_s: float | None = None, breaker: Breaker | None = None):
        self._adapter = adapter
        # The endpoint's breaker, the synchronous adapter's when it has one (the sweep's, shared per
        # endpoint): connection failures are not retried for ever, the lane gets Unreachable and stops
        # with its items unasked, and the sweep's exit status says so.
        self._breaker = breaker or adapter.breaker or Breaker(adapter.url)
        self._redactor = adapter.redactor
        # The key headers; Content-Type is set per call (JSON, multipart or a file's bytes).
        self._headers = {k: v for k, v in adapter.headers.items() if k.lower() != "content-type"}
        retries, backoff = adapter.retry_settings
        self._max_retries = retries if max_retries is None else max_retries
        self._backoff_base_s = backoff if backoff_base_s is None else backoff_base_s
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, sock_connect=min(timeout_s, CONNECT_TIMEOUT_S))
        # A download may take longer than any total: bounded by silence instead.
        self._download_timeout = aiohttp.ClientTimeout(total=None, sock_read=timeout_s,
                                                       sock_connect=min(timeout_s, CONNECT_TIMEOUT_S))
        self._session: aiohttp.ClientSession | None = None
        # The custom_ids of the batches this object submitted, in order: a request missing from
        # a batch's results is reported as not answered (after a restart the engine, which
        # stored the batch's items, must treat missing ones alike).
        self._submitted: dict[str, list[str]] = {}

    def _check(self, requests: Sequence[BatchRequest], pattern: re.Pattern[str] | None = None) -> None:
        """A batch this provider would refuse whole is a ValueError before anything is sent."""
        check_requests(requests, pattern)
        if len(requests) > self.max_requests:
            raise ValueError(f"{len(requests)} requests in one {self.provider} batch; at most {self.max_requests}")
        size = sum(map(self.request_size, requests))
        if size > self.max_bytes:
            raise ValueError(f"{size} bytes in one {self.provider} batch; at most {self.max_bytes}")

    def request_size(self, request: BatchRequest) -> int:
        raise NotImplementedError

    def _remember(self, batch_id: str, requests: Sequence[BatchRequest]) -> str:
        self._submitted[batch_id] = [r.custom_id for r in requests]
        return batch_id

    def _missing_after(self, batch_id: str, seen: set[str]) -> list[BatchOutcome]:
        """Outcomes for the submitted requests the results did not mention."""
        return [self.missing(c, "no result for this request") for c in self._submitted.get(batch_id, ())
                if c not in seen]

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:  # made inside the running loop
            self._session = aiohttp.ClientSession(timeout=self._timeout, headers=self._headers)
        return self._session

    async def _call(self, method: str, url: str, *, body: Body = None, headers: Mapping[str, str] | None = None,
                    params: Mapping[str, str] | None = None, creates: bool = False) -> tuple[bytes, Mapping[str, str]]:
        """One control call, retried like a chat call; a non-2xx status is a classified ProviderError.

        ``creates``: the call creates a batch. It is then not retried after a failure that
        may have reached the server (a timeout, a dropped connection, an unreadable 200):
        a second batch would be paid and answered twice. The caller looks for it instead."""

        async def once() -> tuple[bytes, Mapping[str, str]]:
            data = body() if callable(body) else body
            await self._breaker.admit()
            try:
                async with self._client().request(method, url, data=data, headers=headers, params=params) as resp:
                    raw = await resp.read()
                    status, got = resp.status, resp.headers
            except Exception as e:  # noqa: BLE001 - classify_exception re-raises what is not a provider failure
                raise self._failure(e) from None
            self._breaker.succeeded()
            if status >= 300:
                raise status_error(status, raw[:4000].decode("utf-8", "replace"), got)
            return raw, got

        async def once_unless_ambiguous() -> tuple[bytes, Mapping[str, str]]:
            try:
                return await once()
            except ProviderError as e:
                if creates and e.klass is ErrorClass.TRANSIENT and e.status is None:
                    raise _Ambiguous(e) from None  # not a ProviderError: with_retries lets it through
                raise

        try:
            result, _ = await with_retries(once_unless_ambiguous, max_retries=self._max_retries,
                                           base_s=self._backoff_base_s, breaker=True)
        except _Ambiguous as e:
            raise e.error from None
        return result

    async def _create(self, url: str, payload: bytes, label: str, id_of: Callable[[dict[str, Any]], str]) -> str:
        """Create a batch; after a failure that may have created it anyway, ``find`` it by its label."""
        try:
            raw, _ = await self._call("POST", url, body=payload, headers=JSON, creates=True)
        except ProviderError as e:
            if e.klass is not ErrorClass.TRANSIENT or e.status is not None:
                raise
            found = await self.find(label)
            if found is None:
                raise
            return found
        try:
            return id_of(orjson.loads(raw))
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            found = await self.find(label)
            if found is None:
                raise ProviderError(ErrorClass.TRANSIENT, f"malformed create response: {raw[:200]!r}") from None
            return found

    def _failure(self, e: Exception) -> ProviderError:
        """``e`` classified; a connection failure counts towards the breaker's verdict."""
        err = classify_exception(e)
        if err.klass is ErrorClass.CONNECT:
            self._breaker.failed(self._redactor.text(err.args[0]))  # printed in the sweep's summary
        return err

    async def _lines(self, url: str, params: Mapping[str, str] | None = None) -> AsyncIterator[bytes]:
        """A download's lines as they arrive (a result file may be hundreds of MB: never whole in memory).

        A download cut short starts again from its first line, retried like a control call (the
        caller skips what it has already seen); connection failures are bounded by the breaker."""
        counted = free = 0
        while True:
            try:
                async for line in self._download(url, params):
                    yield line
                return
            except ProviderError as e:
                connect = e.klass is ErrorClass.CONNECT
                counted, free = counted + (not connect), free + connect
                if not e.klass.retryable or counted > self._max_retries or free > MAX_BREAKER_CONNECT_RETRIES:
                    raise
                await anyio.sleep(retry_pause(e, 1 if connect else counted, self._backoff_base_s))

    async def _download(self, url: str, params: Mapping[str, str] | None) -> AsyncIterator[bytes]:
        await self._breaker.admit()
        try:
            async with self._client().get(url, params=params, timeout=self._download_timeout) as resp:
                self._breaker.succeeded()
                if resp.status >= 300:
                    raise status_error(resp.status, (await resp.read())[:4000].decode("utf-8", "replace"),
                                       resp.headers)
                buf = bytearray()
                async for chunk in resp.content.iter_chunked(CHUNK):
                    buf += chunk
                    start = 0
                    while (end := buf.find(b"\n", start)) >= 0:
                        yield bytes(buf[start:end])
                        start = end + 1
                    del buf[:start]
                if buf:
                    yield bytes(buf)
        except ProviderError:
            raise
        except Exception as e:  # noqa: BLE001 - classify_exception re-raises what is not a provider failure
            raise self._failure(e) from None

    async def _delete(self, url: str) -> None:
        """Delete a provider object; one already gone is fine."""
        try:
            await self._call("DELETE", url)
        except ProviderError as e:
            if e.status != 404:
                raise

    async def find(self, label: str, hint: LostCreate | None = None) -> str | None:
        return None

    async def discard(self, batch_id: str) -> None:
        return None  # nothing uploaded, nothing left behind

    async def results(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        """Every request's outcome once (a download started again repeats lines), then the missing ones."""
        seen: set[str] = set()
        try:
            async for outcome in self._outcomes(batch_id):
                if outcome.custom_id not in seen:
                    seen.add(outcome.custom_id)
                    yield outcome
        except Exception as e:  # noqa: BLE001 - redacted, then raised as it is
            raise self._redactor.error(e) from None
        for outcome in self._missing_after(batch_id, seen):
            yield outcome

    def _outcomes(self, batch_id: str) -> AsyncIterator[BatchOutcome]:
        """The outcomes the provider reports, as they are read (a custom_id may repeat)."""
        raise NotImplementedError

    async def _json(self, method: str, url: str, payload: bytes | None = None,
                    params: Mapping[str, str] | None = None) -> dict[str, Any]:
        raw, _ = await self._call(method, url, body=payload, headers=JSON if payload is not None else None,
                                  params=params)
        try:
            doc = orjson.loads(raw) if raw else {}
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict):
            raise ProviderError(ErrorClass.TRANSIENT, f"malformed control response: {raw[:200]!r}")
        return doc

    # -- outcomes, read exactly as the synchronous adapter reads its answers

    def answered(self, custom_id: str, status: int, raw: bytes) -> BatchOutcome:
        """The outcome of a request the provider answered with ``status`` and body ``raw``."""
        if status == 200:
            try:
                result = self._adapter.parse(raw)
            except ProviderError as e:
                return self.failed(custom_id, e)
            leak = self._redactor.exposing_field(result)  # as HttpChat.chat: refused, never altered
            return self.failed(custom_id, key_in_answer(leak)) if leak else BatchOutcome(custom_id, result=result)
        text = raw[:4000].decode("utf-8", "replace")
        blocked = safety_block(status, text)
        if blocked is not None:  # as HttpChat: a vendor's filter refusing is an answer
            return BatchOutcome(custom_id, result=ChatResult(text="", finish_reason="blocked", blocked=blocked))
        return self.failed(custom_id, status_error(status, text, {}))

    def failed(self, custom_id: str, error: ProviderError) -> BatchOutcome:
        redacted_error = self._redactor.error(error)
        assert isinstance(redacted_error, ProviderError)
        return BatchOutcome(custom_id, error=redacted_error)

    def missing(self, custom_id: str, reason: str) -> BatchOutcome:
        return self.failed(custom_id, unanswered(reason))

    def text(self, value: str | None) -> str | None:
        return self._redactor.text(value) if value else value

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class _Ambiguous(Exception):
    def __init__(self, error: ProviderError):
        super().__init__(str(error))
        self.error = error


def json_line(line: bytes) -> dict[str, Any] | None:
    """One object of a JSONL document; a line that is not one is None (its request is then missing
    from the results, which the caller treats as not answered)."""
    if not line.strip():
        return None
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None
