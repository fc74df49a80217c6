"""A dataset's paths are declared once, in its adapter's `files`; benchmark/sources.toml must fetch them.

The adapter says where `records` reads (most preferred copy first); the manifest says where
`python -m engine data pull` puts each downloaded file. They cannot be derived from each other
(the manifest also pins URLs, revisions and hashes, and an adapter may prefer a copy that cannot
be downloaded), so this test holds them together: a dataset with files has a manifest entry or a
test fixture (tests/benchmark/fixtures/<id>), and when it has an entry, at least one of its
candidate patterns matches a file that entry fetches, so a pull always leaves it readable.
docs/architecture.md ("Where files are") states the rule.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pytest

from benchmark import registry, sources
from benchmark.loaders import roots

IDS = registry.all_ids()
FIXTURES = Path(__file__).parent / "fixtures"
MANIFEST = sources.load()


def candidate_globs(dataset_id: str) -> list[str]:
    """Where the adapter looks, as globs relative to --data-dir."""
    ds = registry.get(dataset_id)
    assert ds is not None
    return [str(root / f.pattern) for f in ds.files for root in roots(f, Path(), dataset_id)]


# Manifest entries no adapter reads yet, and why.
NOT_YET_ADAPTED = {"locomo": "fetched for a dataset in no suite yet (sources.toml says so)"}


def _landed(t: sources.Target) -> str:
    """What a pulled file becomes: an unpacked zip anything beside it, a .bz2 its decompressed self."""
    if t.unpack == "zip":
        return str(Path(t.dest).parent / "*")
    return t.dest.removesuffix(".bz2") if t.unpack == "bz2" else t.dest


def fetched(dataset_id: str) -> tuple[list[str], list[str]]:
    """(files a pull leaves for this id, globs of Hub listings it expands), relative to --data-dir."""
    targets, listings = sources.resolve(MANIFEST, [dataset_id])
    return [_landed(t) for t in targets], [f"{lst.dest}/{lst.glob}" for lst in listings]


def _prefix(glob: str) -> str:
    return re.split(r"[*?\[]", glob, maxsplit=1)[0]


@pytest.mark.parametrize("dataset_id", IDS)
def test_a_pull_fetches_what_the_adapter_reads(dataset_id):
    globs = candidate_globs(dataset_id)
    if not globs:
        pytest.skip(f"{dataset_id} reads no files")
    if dataset_id not in MANIFEST.datasets:
        assert (FIXTURES / dataset_id).is_dir(), \
            f"{dataset_id}: neither a [datasets.{dataset_id}] entry in benchmark/sources.toml nor a fixture"
        pytest.skip(f"{dataset_id}: no sources.toml entry (`data pull` cannot fetch it); its fixture is tested")
    files, listings = fetched(dataset_id)
    hits = [g for g in globs if any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(g, f) for f in files)
            or any(_prefix(g).startswith(_prefix(lst)) or _prefix(lst).startswith(_prefix(g)) for lst in listings)]
    assert hits, f"{dataset_id}: the adapter reads {globs}; sources.toml fetches {files + listings}"


def test_every_manifest_entry_is_a_dataset_or_shared():
    """An entry no dataset id names is a folder that several ids share (through `uses`)."""
    used = {u for e in MANIFEST.datasets.values() for u in e.uses}
    orphans = set(MANIFEST.datasets) - set(IDS) - used - set(NOT_YET_ADAPTED)
    assert not orphans, f"sources.toml entries no dataset reads: {sorted(orphans)}"


# Files a `records` override reads beside its `files` (joined in, not items), as docs/datasets.md names them.
SIDE_FILES = {
    "bbq": {"bbq/analysis_scripts/additional_metadata.csv"},
    "personafeedback": {"persona/<user_id>.json"},
}
_DOC_ROW = re.compile(r"\| `([a-z0-9_]+)`[^|]* \| (.*?) \|")


def _doc_path_matches(path: str, glob: str) -> bool:
    """A path as docs/datasets.md writes it ("..." for an elided middle, or only the tail) read by `glob`."""
    p = path.replace("...", "*")
    return any(fnmatch.fnmatch(a, b) for a, b in ((p, glob), (glob, p), (glob, "*/" + p)))


def test_the_dataset_docs_name_the_paths_the_adapters_read():
    """docs/datasets.md's table describes the files; where it names a path, the declaration reads it."""
    text = (Path(__file__).parents[2] / "docs" / "datasets.md").read_text(encoding="utf-8")
    wrong = []
    for line in text.splitlines():
        m = _DOC_ROW.match(line)
        if not m or m.group(1) not in IDS:
            continue
        dataset_id, cell = m.groups()
        for path in re.findall(r"`([^`]+)`", cell):
            if "/" not in path or path.startswith("benchmark/") or not re.search(r"\.\w+$|\*", path):
                continue  # not a data path
            if path in SIDE_FILES.get(dataset_id, ()):
                continue
            if not any(_doc_path_matches(path, g) for g in candidate_globs(dataset_id)):
                wrong.append(f"{dataset_id}: {path}")
    assert not wrong, f"docs/datasets.md names paths no adapter reads: {wrong}"
