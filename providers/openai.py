"""OpenAI-compatible chat completions (`POST {base_url}/chat/completions`) on aiohttp."""

from __future__ import annotations

import time
from typing import Any, Sequence

import aiohttp
import orjson

from providers.base import ChatResult
from providers.errors import ErrorClass, ProviderError, classify_exception, classify_status, parse_retry_after
from providers.limits import Limits
from providers.retry import with_retries


class OpenAIChat:
    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        generation: dict[str, Any],
        limits: Limits | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 8,
        max_connections: int = 64,
        backoff_base_s: float = 1.0,
    ):
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._secret = api_key
        self._headers = {"Content-Type": "application/json"}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._generation = dict(generation)
        self._limits = limits or Limits()
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._max_retries = max_retries
        self._max_connections = max_connections
        self._backoff_base_s = backoff_base_s
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        # Created lazily: a ClientSession must be made inside the running event loop.
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._max_connections, ttl_dns_cache=300)
            self._session = aiohttp.ClientSession(connector=connector, timeout=self._timeout)
        return self._session

    def request_body(self, messages: Sequence[Any]) -> bytes:
        payload = {
            "model": self._model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            **self._generation,
        }
        return orjson.dumps(payload)

    async def chat(self, messages: Sequence[Any]) -> ChatResult:
        body = self.request_body(messages)
        # Estimate before the call for the tokens-per-minute bucket: ~4 bytes a token.
        est_tokens = len(body) // 4 + int(self._generation.get("max_tokens") or 256)
        t0 = time.perf_counter()
        result, attempts = await with_retries(
            lambda: self._once(body, est_tokens), max_retries=self._max_retries, base_s=self._backoff_base_s
        )
        result.attempts = attempts
        result.latency_ms = (time.perf_counter() - t0) * 1000
        return result

    async def _once(self, body: bytes, est_tokens: int) -> ChatResult:
        await self._limits.acquire(est_tokens)
        try:
            async with self._client().post(self._url, data=body, headers=self._headers) as resp:
                raw = await resp.read()
                status = resp.status
                retry_after = resp.headers.get("Retry-After")
        except Exception as e:  # noqa: BLE001 - classify_exception re-raises what is not a provider failure
            raise self._redact(classify_exception(e)) from None
        if status != 200:
            text = raw[:2000].decode("utf-8", "replace")
            raise self._redact(ProviderError(
                classify_status(status, text), _error_message(text), status=status,
                retry_after=parse_retry_after(retry_after),
            ))
        return _parse(raw)

    def _redact(self, err: ProviderError) -> ProviderError:
        # Some APIs echo (part of) the key in their error text; never let it reach a row or a log.
        if self._secret and self._secret in err.args[0]:
            err.args = (err.args[0].replace(self._secret, "***"),)
        return err

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _parse(raw: bytes) -> ChatResult:
    try:
        doc = orjson.loads(raw)
        choice = doc["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        usage = doc.get("usage") or {}
        return ChatResult(
            text=text,
            model_version=doc.get("model"),
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            finish_reason=choice.get("finish_reason"),
        )
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, AttributeError):
        raise ProviderError(ErrorClass.TRANSIENT, f"malformed response body: {raw[:200]!r}") from None


def _error_message(text: str) -> str:
    """The API's own error message when the body has OpenAI's error shape."""
    try:
        err = orjson.loads(text)["error"]
        parts = [str(err.get("message", "")).strip(), str(err.get("code") or err.get("type") or "")]
        return " ".join(p for p in parts if p)[:500] or text[:500]
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        return text[:500] or "(empty body)"
