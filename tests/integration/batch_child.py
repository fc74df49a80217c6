"""A sweep process whose batch API is the fake, its state in a file (as a provider keeps its batches).

    python -m tests.integration.batch_child STATE.pickle sweep models.toml --db ...

The parent test kills this process with SIGKILL and edits the state in between runs.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any

import orjson

from engine.lanes.batch import core as batch_core
from engine.cli import main
from providers.errors import ErrorClass, ProviderError
from simulator.core import make_answer
from tests.engine.batch_fakes import FakeBatchAPI

KEPT = ("batches", "answered", "polls", "fail_ids", "first_only")


def gold_answer(body: bytes) -> str:
    msgs = orjson.loads(body)["messages"]
    return make_answer("gold", msgs[-1]["content"], [m["content"] for m in msgs])


class FileBatchAPI(FakeBatchAPI):
    """The fake, loading its state before each call and saving it after (atomically)."""

    def __init__(self, path: Path, **kw: Any):
        super().__init__(**kw)
        self.path = path
        self.fail_ids: set[str] = set()
        self.answer = gold_answer
        self.load()

    def load(self) -> None:
        if self.path.exists():
            for k, v in pickle.loads(self.path.read_bytes()).items():
                setattr(self, k, v)
        self.fail = {c: ProviderError(ErrorClass.TRANSIENT, "overloaded") for c in self.fail_ids}

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(pickle.dumps({k: getattr(self, k) for k in KEPT}))
        os.replace(tmp, self.path)

    async def submit(self, requests, *, label):
        self.load()
        try:
            return await super().submit(requests, label=label)
        finally:
            self.save()

    async def status(self, batch_id):
        self.load()
        try:
            return await super().status(batch_id)
        finally:
            self.save()

    async def results(self, batch_id):
        self.load()
        async for out in super().results(batch_id):
            yield out
        self.save()


def state(path: Path) -> dict:
    return pickle.loads(path.read_bytes()) if path.exists() else {}


def write_state(path: Path, **changes: Any) -> None:
    st = state(path)
    st.update(changes)
    path.write_bytes(pickle.dumps(st))


if __name__ == "__main__":
    api = FileBatchAPI(Path(sys.argv[1]), max_requests=15, states=["in_progress"] * 1000)
    batch_core.make_api = lambda provider, adapter: api  # type: ignore[assignment]
    sys.exit(main(sys.argv[2:]))
