"""benchmark.cache: a dataset's seeded sample kept per machine, and when it is not used."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchmark import cache, registry
from benchmark.sampling import seeded_sample

SHARED = Path(os.environ.get("ENGINE_SHARED_DIR", Path(__file__).parents[3] / "shared")) / "datasets"
SST2 = SHARED / "sst2"


@pytest.fixture
def data(tmp_path, monkeypatch):
    if not SST2.is_dir():
        pytest.skip(f"no sst2 data under {SHARED} (set ENGINE_SHARED_DIR)")
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(SST2, tmp_path / "data" / "sst2")
    return tmp_path / "data"


def sample(data_dir: Path, limit: int = 20, seed: int = 7, calls: list | None = None):
    ds = registry.get("sst2")
    assert ds is not None

    def make():
        if calls is not None:
            calls.append(1)
        return seeded_sample(ds.records(data_dir), ds.id, limit, seed)

    return cache.cached_sample(ds, data_dir, limit, seed, make)


def entries(data: Path) -> list[Path]:
    return sorted((data.parent / "cache" / "samples").glob("*.msgpack"))


def test_the_stored_sample_is_the_sample(data):
    calls: list = []
    first = sample(data, calls=calls)
    again = sample(data, calls=calls)
    assert len(calls) == 1 and len(entries(data)) == 1
    assert again == first and len(first) == 20
    assert [type(r) for _, r in again] == [dict] * 20 and again[0][1] is not first[0][1]
    assert sample(data, limit=21, calls=calls)[:20] != [] and len(calls) == 2  # another limit: another entry
    assert sample(data, seed=8, calls=calls) != first and len(calls) == 3


def test_a_changed_file_misses(data):
    calls: list = []
    sample(data, calls=calls)
    f = next(p for p in (data / "sst2").rglob("*.parquet"))
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    sample(data, calls=calls)
    assert len(calls) == 2
    (data / "sst2" / "extra.txt").write_text("a file added beside the data")
    sample(data, calls=calls)
    assert len(calls) == 3


def test_another_loader_version_misses(data, monkeypatch):
    calls: list = []
    sample(data, calls=calls)
    monkeypatch.setattr(cache, "_source", ["another version of benchmark/"])
    sample(data, calls=calls)
    assert len(calls) == 2


def test_a_corrupt_or_partial_entry_is_made_again(data):
    calls: list = []
    want = sample(data, calls=calls)
    (entry,) = entries(data)
    for broken in (entry.read_bytes()[: len(entry.read_bytes()) // 2], b"\xc1 not msgpack"):
        entry.write_bytes(broken)
        assert sample(data, calls=calls) == want
        assert entry.read_bytes() != broken  # rewritten whole
    assert len(calls) == 3
    assert not list(entry.parent.glob(".*.tmp"))


def test_records_that_would_not_read_back_as_they_are_are_not_stored(tmp_path, monkeypatch, data):
    ds = registry.get("sst2")
    got = cache.cached_sample(ds, data, 2, 0, lambda: [("a", {"x": (1, 2)}), ("b", {"y": float("nan")})])
    assert got[0] == ("a", {"x": (1, 2)})
    assert entries(data) == []


def test_no_data_where_the_declaration_says_leaves_the_adapter_to_say_it(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    ds = registry.get("sst2")
    assert cache.cached_sample(ds, tmp_path, 2, 0, lambda: [("made", {})]) == [("made", {})]


def test_a_generated_dataset_is_keyed_by_its_declaration(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    ds = registry.get("synthetic")
    calls: list = []

    def make():
        calls.append(1)
        return seeded_sample(ds.records(tmp_path), ds.id, 5, 0)

    first = cache.cached_sample(ds, tmp_path, 5, 0, make)
    assert cache.cached_sample(ds, tmp_path / "elsewhere", 5, 0, make) == first and len(calls) == 1
    monkeypatch.setattr(ds, "pool_size", 10, raising=False)  # a value changed on the instance: another key
    cache.cached_sample(ds, tmp_path, 5, 0, make)
    assert len(calls) == 2
