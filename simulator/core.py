"""Wire-neutral machinery of the simulated provider: config, limits, faults, answers.

Every wire format (OpenAI chat completions, Anthropic Messages, Gemini
generateContent) parses its own request, then asks ``SimState.admit`` what to
do and renders the resulting ``Decision`` in its own error and response shapes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
import re
import time
import zlib
from collections import defaultdict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

# "overloaded" is Anthropic's 529 (a 503 elsewhere); "refusal" and "blocked"
# are answers, not errors: the model declines / the vendor's filter blocks
# the answer (rendered per wire: OpenAI message.refusal / content_filter,
# Anthropic stop_reason "refusal", Gemini promptFeedback / finishReason SAFETY).
FAULT_KINDS = ("429", "500", "503", "malformed", "drop", "quota", "overloaded", "refusal", "blocked")
ANSWER_MODES = ("letter", "echo", "gold", "fixed", "judge", "seeker")  # judge[:malformed[:refuse]]: simulator/judge.py; seeker[:malformed]: simulator/seeker.py
MODEL_SUFFIX = "-sim-2024"
# Knobs a model profile may override; everything else is server-wide.
PROFILE_KEYS = ("latency_ms", "jitter_ms", "rpm", "faults", "mode", "fail_first", "account")


@dataclass(frozen=True)
class Behaviour:
    """How one model behaves. A profile is the default with some fields replaced."""

    latency_ms: float = 0.0
    jitter_ms: float = 0.0
    rpm: int | None = None
    # (kind, cumulative upper bound) pairs: one uniform draw picks at most one fault.
    faults: tuple[tuple[str, float], ...] = ()
    mode: str = "letter"
    fail_first: int = 0
    # Models naming the same account share one rpm window (the limit is the
    # account's: give its models the same rpm).
    account: str | None = None


@dataclass(frozen=True)
class SimConfig:
    default: Behaviour = Behaviour()
    profiles: Mapping[str, Behaviour] = field(default_factory=dict)
    models: tuple[str, ...] = ()
    api_key: str | tuple[str, ...] | None = None  # one key, or several accepted keys
    seed: int = 0
    strict_models: bool = False
    rpm_window_s: float = 60.0
    echo_key: bool = False  # a careless gateway: the caller's key comes back in every answer (simulator/echo.py)
    # A llama.cpp server (simulator/llama.py): requests evaluated at once, and the context window.
    slots: int | None = None
    n_ctx: int | None = None
    # Batch APIs (simulator/batches.py): seconds from creation to the end of a batch, and the
    # share of its requests that fail (a 500) or are left unanswered (the batch then expires),
    # drawn by (seed, model and custom_id, how often that pair was submitted before).
    batch_latency_s: float = 0.5
    batch_error_rate: float = 0.0
    batch_expire_rate: float = 0.0
    # The request log: /_stats "requests" counts requests per "model conversation fingerprint" (the
    # X-Conversation-Id header, "-" without it): one call of one episode's turn, asked how many times.
    request_log: bool = False

    def behaviour(self, model: str) -> Behaviour:
        return self.profiles.get(model, self.default)

    def accepts(self, key: str | None) -> bool:
        """Is ``key`` a valid API key (always, when none is configured)?"""
        if not self.api_key:
            return True
        keys = (self.api_key,) if isinstance(self.api_key, str) else self.api_key
        return key is not None and key in keys

    def listed_models(self) -> list[str]:
        return sorted(set(self.models) | set(self.profiles))


# --------------------------------------------------------------------------- config


def parse_faults(spec: str | Mapping[str, float] | None) -> tuple[tuple[str, float], ...]:
    """'429=0.05,drop=0.01' or {'429': 0.05} -> cumulative (kind, bound) pairs."""
    if not spec:
        return ()
    if isinstance(spec, str):
        pairs = [item.split("=", 1) for item in spec.split(",") if item.strip()]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(f"bad fault spec {spec!r}: expected kind=probability,...")
        spec = {k.strip(): float(v) for k, v in pairs}
    total, out = 0.0, []
    for kind, prob in spec.items():
        kind = str(kind)
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
        if not 0.0 <= float(prob) <= 1.0:
            raise ValueError(f"fault probability for {kind} must be in [0, 1], got {prob}")
        total += float(prob)
        out.append((kind, total))
    if total > 1.0 + 1e-9:
        raise ValueError(f"fault probabilities sum to {total:.3f} > 1")
    return tuple(out)


def parse_profile(spec: str) -> tuple[str, dict[str, Any]]:
    """'name:latency_ms=50,rpm=120,fault.429=0.1,mode=gold' -> (name, knobs)."""
    name, sep, rest = spec.partition(":")
    if not sep or not name:
        raise ValueError(f"bad profile {spec!r}: expected name:key=value,...")
    knobs: dict[str, Any] = {}
    faults: dict[str, float] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"bad profile item {item!r} in {spec!r}")
        if key.startswith("fault."):
            faults[key[len("fault."):]] = float(value)
        else:
            knobs[key] = value
    if faults:
        knobs["faults"] = faults
    return name, knobs


def _check_mode(mode: str) -> str:
    if mode.split(":", 1)[0] not in ANSWER_MODES or mode == "fixed":
        raise ValueError(f"unknown mode {mode!r}; use letter, echo, gold, fixed:<text>, judge[:malformed[:refuse]] or seeker[:malformed]")
    return mode


def _behaviour(base: Behaviour, knobs: Mapping[str, Any], where: str) -> Behaviour:
    unknown = set(knobs) - set(PROFILE_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown knob(s) {sorted(unknown)}; known: {PROFILE_KEYS}")
    changes: dict[str, Any] = {}
    for key in ("latency_ms", "jitter_ms"):
        if key in knobs:
            changes[key] = float(knobs[key])
    if "rpm" in knobs:
        rpm = knobs["rpm"]
        changes["rpm"] = None if rpm in (None, "", 0, "0", "none") else int(rpm)
    if "fail_first" in knobs:
        changes["fail_first"] = int(knobs["fail_first"])
    if "faults" in knobs:
        changes["faults"] = parse_faults(knobs["faults"])
    if "mode" in knobs:
        changes["mode"] = _check_mode(str(knobs["mode"]))
    if "account" in knobs:
        changes["account"] = str(knobs["account"]) or None
    return dataclasses.replace(base, **changes)


def config_from_knobs(
    *,
    profiles: Mapping[str, Mapping[str, Any]] | None = None,
    models: tuple[str, ...] | list[str] = (),
    api_key: str | list[str] | tuple[str, ...] | None = None,
    seed: int = 0,
    strict_models: bool = False,
    rpm_window_s: float = 60.0,
    echo_key: bool = False,
    slots: int | None = None,
    n_ctx: int | None = None,
    batch_latency_s: float = 0.5,
    batch_error_rate: float = 0.0,
    batch_expire_rate: float = 0.0,
    request_log: bool = False,
    **default_knobs: Any,
) -> SimConfig:
    """Build a config from plain values (the one path for CLI, subprocess and tests)."""
    default = _behaviour(Behaviour(), default_knobs, "server knobs")
    built = {
        name: _behaviour(default, knobs, f"profile {name!r}")
        for name, knobs in (profiles or {}).items()
    }
    key = tuple(api_key) if isinstance(api_key, (list, tuple)) else api_key
    return SimConfig(default, built, tuple(models), key or None, int(seed),
                     bool(strict_models), float(rpm_window_s), bool(echo_key),
                     int(slots) if slots else None, int(n_ctx) if n_ctx else None,
                     float(batch_latency_s), _rate(batch_error_rate, "batch_error_rate"),
                     _rate(batch_expire_rate, "batch_expire_rate"), bool(request_log))


def _rate(value: Any, name: str) -> float:
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)


# --------------------------------------------------------------------------- answers

# "A. x", "A) x", "(A) x"; one capture group keeps findall cheap ("(A. x" also
# matches, which is harmless).
_OPTION_RE = re.compile(r"^[ \t]*\(?([A-Z])[.)][ \t]+\S", re.M)
_GOLD_RE = re.compile(r"^[ \t]*\[\[gold:(.*?)\]\][ \t]*$", re.M)


def fingerprint(model: str, messages: Any) -> str:
    """First 16 hex of blake2b(model + compact JSON of messages); tests recompute it."""
    return hashlib.blake2b(model.encode() + orjson.dumps(messages), digest_size=8).hexdigest()


def letter_answer(text: str) -> str:
    letters = list(dict.fromkeys(_OPTION_RE.findall(text))) or ["A", "B"]
    # crc32, not hash(): str hashes are salted per process, answers must not be.
    return "Answer: " + letters[zlib.crc32(text.encode()) % len(letters)]


def make_answer(mode: str, last_user: str, texts: list[str]) -> str:
    """The deterministic reply text for a prompt under an answer mode."""
    if mode == "letter":
        return letter_answer(last_user)
    if mode == "echo":
        return last_user
    if mode.startswith("judge"):
        from simulator.judge import judge_reply

        return judge_reply(mode, last_user)
    if mode.startswith("seeker"):
        from simulator.seeker import answer

        return answer(mode, last_user, texts)
    if mode == "gold":
        for text in reversed(texts):
            found = _GOLD_RE.search(text)
            if found:
                return "Answer: " + found.group(1).strip()
        return letter_answer(last_user)
    return mode[len("fixed:"):]


def count_tokens(prompt_chars: int, answer: str) -> tuple[int, int]:
    """(prompt_tokens, completion_tokens) by the crude 4-characters-a-token rule."""
    return prompt_chars // 4, len(answer) // 4 + 1


# --------------------------------------------------------------------------- decisions


class Decision(NamedTuple):
    """What to do with one admitted request; the wire handler renders it."""

    kind: str  # "ok", "rpm", "fail_first", or a fault kind
    delay_s: float  # sleep this long before answering
    retry_after_s: float | None  # only for "rpm"
    limit_headers: dict[str, str] | None  # x-ratelimit-* when the model has an rpm
    behaviour: Behaviour
    # (limit, remaining, seconds until the window is empty) when the model has
    # an rpm, for wires with their own header names.
    window: tuple[int, int, float] | None = None


def go_duration(seconds: float) -> str:
    """OpenAI's reset header style: '250ms', '1.5s', '6m0s'."""
    if seconds < 1:
        return f"{max(0, round(seconds * 1000))}ms"
    if seconds < 60:
        return f"{round(seconds, 3):g}s"
    minutes, rest = divmod(seconds, 60)
    return f"{int(minutes)}m{rest:.0f}s"


class Stats:
    """Counters for /_stats; cheap dict increments only."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.total = 0
        self.by_model: defaultdict[str, int] = defaultdict(int)
        self.by_status: defaultdict[str, int] = defaultdict(int)
        self.by_fault: defaultdict[str, int] = defaultdict(int)
        self.by_prompt: defaultdict[str, int] = defaultdict(int)
        self.by_prompt_ok: defaultdict[str, int] = defaultdict(int)
        self.throttled_by_model: defaultdict[str, int] = defaultdict(int)  # 429s of the rpm limit
        self.by_max_tokens: defaultdict[str, int] = defaultdict(int)  # output cap asked for ('none': unset)
        # Batch APIs: by_model and the others above count synchronous calls only.
        self.batches_created: defaultdict[str, int] = defaultdict(int)  # provider -> batches
        self.batch_requests: defaultdict[str, int] = defaultdict(int)  # provider -> requests submitted
        # "{model}/{custom_id}" -> answers (200) / failed answers / expired or cancelled
        self.batch_answered: defaultdict[str, int] = defaultdict(int)
        self.batch_errored: defaultdict[str, int] = defaultdict(int)
        self.batch_unanswered: defaultdict[str, int] = defaultdict(int)
        self.requests: defaultdict[str, int] = defaultdict(int)  # the request log (SimConfig.request_log)

    def snapshot(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "by_model": self.by_model,
            "by_status": self.by_status,
            "by_fault": self.by_fault,
            "by_prompt": self.by_prompt,
            "by_prompt_ok": self.by_prompt_ok,
            "throttled_by_model": self.throttled_by_model,
            "by_max_tokens": self.by_max_tokens,
            "batches_created": self.batches_created,
            "batch_requests": self.batch_requests,
            "batch_answered": self.batch_answered,
            "batch_errored": self.batch_errored,
            "batch_unanswered": self.batch_unanswered,
            "requests": self.requests,
        }


class SimState:
    """Per-server mutable state shared by every wire format's handlers."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self.stats = Stats()
        self.windows: dict[str, deque[float]] = {}
        self.known_models = frozenset(config.listed_models())
        self._jitter = random.Random(config.seed)
        self._seed = str(config.seed).encode()
        self._ids = 0

    def reset(self) -> None:
        self.stats.reset()
        self.windows.clear()
        self._jitter = random.Random(self.config.seed)

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def record(self, model: str | None, status: int | str, fp: str | None = None,
               ok: bool = False) -> None:
        stats = self.stats
        stats.total += 1
        stats.by_status[str(status)] += 1
        if model is not None:
            stats.by_model[model] += 1
        if ok and fp is not None:
            stats.by_prompt_ok[fp] += 1

    def admit(self, model: str, fp: str) -> Decision:
        """Decide the fate of a valid request: rpm, then fail-first, then faults."""
        beh = self.config.behaviour(model)
        attempt = self.stats.by_prompt[fp]
        self.stats.by_prompt[fp] = attempt + 1
        headers, retry_after, window = None, None, None
        if beh.rpm:
            retry_after, headers, window = self._take_slot(beh.account or model, beh.rpm)
            if retry_after is not None:
                self.stats.throttled_by_model[model] += 1
                return Decision("rpm", 0.0, retry_after, headers, beh, window)
        kind = "ok"
        if attempt < beh.fail_first:
            kind = "fail_first"
        elif beh.faults:
            kind = self._draw_fault(beh.faults, fp, attempt)
        if kind != "ok":
            self.stats.by_fault[kind] += 1
        return Decision(kind, self._delay(beh), None, headers, beh, window)

    def draw(self, key: str, attempt: int) -> float:
        """A uniform number in [0, 1) fixed by (seed, key, attempt)."""
        # Keyed rather than one shared random stream, so the same attempt at the same
        # prompt gets the same fault whatever the arrival order of concurrent
        # requests: runs are reproducible.
        digest = hashlib.blake2b(b"%s:%s:%d" % (self._seed, key.encode(), attempt), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2.0**64

    def answer_kind(self, model: str, fp: str) -> str:
        """A batch request's answer: "refusal" or "blocked" when the model's faults would make the
        first synchronous call of that prompt one, else "ok" (a batch has no transport faults)."""
        beh = self.config.behaviour(model)
        kind = self._draw_fault(beh.faults, fp, 0) if beh.faults else "ok"
        return kind if kind in ("refusal", "blocked") else "ok"

    def _draw_fault(self, faults: tuple[tuple[str, float], ...], fp: str, attempt: int) -> str:
        u = self.draw(fp, attempt)
        for kind, bound in faults:
            if u < bound:
                return kind
        return "ok"

    def _delay(self, beh: Behaviour) -> float:
        ms = beh.latency_ms
        if beh.jitter_ms:
            ms += self._jitter.uniform(-beh.jitter_ms, beh.jitter_ms)
        return ms / 1000.0 if ms > 0 else 0.0

    def _take_slot(self, key: str, rpm: int) -> tuple[float | None, dict[str, str], tuple[int, int, float]]:
        """Sliding-window rpm of a model or account: (retry_after or None if
        admitted, x-ratelimit headers, (limit, remaining, reset seconds))."""
        now = time.monotonic()
        span = self.config.rpm_window_s
        window = self.windows.get(key)
        if window is None:
            window = self.windows[key] = deque()
        while window and window[0] <= now - span:
            window.popleft()
        retry_after = None
        if len(window) >= rpm:
            retry_after = window[0] + span - now
        else:
            window.append(now)
        reset = window[-1] + span - now if window else 0.0
        headers = {
            "x-ratelimit-limit-requests": str(rpm),
            "x-ratelimit-remaining-requests": str(rpm - len(window)),
            "x-ratelimit-reset-requests": go_duration(reset),
        }
        if retry_after is not None:
            headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
            headers["retry-after-ms"] = str(max(1, math.ceil(retry_after * 1000)))
        return retry_after, headers, (rpm, rpm - len(window), reset)


def reply(mode: str, texts: list[str], last_user: str, cap: int | None) -> tuple[str, bool, int, int]:
    """The answer to a prompt, for any wire: (text, cut at the cap, prompt tokens, completion tokens)."""
    answer = make_answer(mode, last_user, texts)
    cut = bool(cap) and len(answer) > cap * 4  # type: ignore[operator]
    if cut:
        answer = answer[: cap * 4]  # type: ignore[operator]
    prompt_tokens, completion_tokens = count_tokens(sum(map(len, texts)), answer)
    return answer, cut, prompt_tokens, completion_tokens
