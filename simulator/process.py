"""Run the simulated provider in a subprocess: its own core, never an orphan."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import select
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson

from simulator.core import config_from_knobs

_REPO_ROOT = str(Path(__file__).resolve().parents[1])


class SimServerProcess:
    """``with SimServerProcess(latency_ms=50, faults={"500": 0.1}) as sim: sim.base_url``.

    Knobs are those of ``simulator.core.config_from_knobs`` (latency_ms,
    jitter_ms, rpm, faults, mode, fail_first, account (profiles), profiles, models,
    api_key (one key or a list), seed,
    strict_models, rpm_window_s, batch_latency_s, batch_error_rate, batch_expire_rate, request_log).
    Works as a sync and an async context manager.
    """

    def __init__(self, host: str = "127.0.0.1", startup_timeout: float = 15.0, port: int = 0,
                 **knobs: Any) -> None:
        config_from_knobs(**knobs)  # fail fast here, not in the child
        self.host = host
        self.port = port  # 0: a free one
        self.knobs = knobs
        self.startup_timeout = startup_timeout
        self.base_url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None

    # ------------------------------------------------------------ lifecycle

    def start(self) -> SimServerProcess:
        self._stderr = tempfile.TemporaryFile()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_REPO_ROOT, env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "simulator.server", "--host", self.host, "--port", str(self.port),
               "--watch-stdin", "--config-json", orjson.dumps(self.knobs).decode()]
        # stdin is a pipe we never write: the child exits on its EOF if we die.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, env=env, cwd=_REPO_ROOT)
        atexit.register(self.stop)
        try:
            self.base_url = self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        out = self.proc.stdout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"sim server not READY after {self.startup_timeout}s"
                                   f"{self._stderr_tail()}")
            readable, _, _ = select.select([out], [], [], left)
            if not readable:
                continue
            line = out.readline().decode().strip()
            if line.startswith("READY "):
                return line.split(" ", 1)[1]
            if not line:  # EOF: the child died before listening
                self.proc.wait(timeout=5)
                raise RuntimeError(f"sim server exited with code {self.proc.returncode}"
                                   f"{self._stderr_tail()}")

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        text = self._stderr.read()[-2000:].decode(errors="replace").strip()
        return f"; stderr:\n{text}" if text else ""

    def stop(self) -> None:
        """Terminate (then kill) the child; idempotent."""
        atexit.unregister(self.stop)
        proc, self.proc = self.proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def __enter__(self) -> SimServerProcess:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    async def __aenter__(self) -> SimServerProcess:
        # Startup blocks ~0.3 s on the child's imports: keep the loop free meanwhile.
        starting = asyncio.ensure_future(asyncio.to_thread(self.start))
        try:
            return await asyncio.shield(starting)
        except asyncio.CancelledError:
            # The thread cannot be cancelled; let it finish, then kill what it started.
            with contextlib.suppress(BaseException):
                await starting
            self.stop()
            raise

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.stop)

    # ------------------------------------------------------------ control endpoints

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def _call(self, method: str, path: str) -> Any:
        req = urllib.request.Request(self.root_url + path, method=method,
                                     data=b"" if method == "POST" else None)
        with urllib.request.urlopen(req, timeout=10) as resp:
            return orjson.loads(resp.read())

    def stats(self) -> dict[str, Any]:
        """Counters: total, by_model, by_status, by_fault, by_prompt, by_prompt_ok, ... and for the
        batch APIs batches_created / batch_requests (by provider), batch_answered / batch_errored /
        batch_unanswered (by custom_id); see simulator.core.Stats."""
        return self._call("GET", "/_stats")

    def reset(self) -> None:
        self._call("POST", "/_reset")

    async def astats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats)

    async def areset(self) -> None:
        await asyncio.to_thread(self.reset)
