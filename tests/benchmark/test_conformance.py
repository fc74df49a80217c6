"""The same checks over every registered dataset id (the pattern of lm-eval's tests/test_tasks.py).

For each id: its declaration (Dataset protocol, metric kinds the views aggregate, one primary
metric), its stamps (the same on a second load and in a fresh interpreter with another hash
seed), and on its fixture (tests/benchmark/fixtures/<id>) or the team's real data (skipped with
the reason when absent): ids unique and stable, every item rendered with non-empty messages and
a gold answer (so are its other samples, and its shortened form where the dataset can fit a
token budget), the gold answer scoring the maximum, a wrong answer scoring lower, and the
measure keys the scorer emits matching the keys its metrics read. Last, every stamp and the
hashes of its first rendered and scored items against the golden file (fixtures/stamps.json).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmark import registry
from benchmark.context import item_tokens
from benchmark.dataset import DataMissing, Dataset, Item, Scored
from benchmark.loaders import Files
from benchmark.sampling import seeded_sample
from tests.conftest import ROOT

IDS = registry.all_ids()
FIXTURES = Path(__file__).parent / "fixtures"
N_ITEMS = 40  # a seeded sample: enough to meet every label, small enough to be quick

# Measure keys a scorer records for the item browser that no metric aggregates (by design).
INFORMATIONAL_KEYS = {
    "longmemeval": {"sessions_dropped"},  # truncated_rate reads `truncated`; this says how much was cut
}


def _view_kinds() -> set[str]:
    """The aggregate kinds the metric_values view knows, as created (anything else would give NULL)."""
    from store.hierarchy.views import views_sql

    sql = views_sql()
    view = sql[sql.index("VIEW metric_values"):]
    view = view[: view.index("CREATE", 1)] if "CREATE" in view[1:] else view
    return set(re.findall(r"WHEN '(\w+)' THEN", view))


def test_every_dataset_is_listed():
    assert len(IDS) >= 60
    assert len(set(IDS)) == len(IDS)
    assert all(registry.get(i).id == i for i in IDS)


@pytest.mark.parametrize("dataset_id", IDS)
def test_declaration(dataset_id):
    ds = registry.get(dataset_id)
    assert isinstance(ds, Dataset)
    assert ds.language in ("en", "zh", "mixed")
    assert ds.samples >= 1
    assert isinstance(ds.max_tokens, int) and ds.max_tokens > 0
    assert all(isinstance(f, Files) for f in ds.files)
    assert ds.rubric is None or isinstance(ds.rubric.version, str) and ds.rubric.version
    for baseline in (ds.chance_baseline, ds.majority_baseline):
        assert baseline is None or 0 <= baseline <= 1
    names = [m.name for m in ds.metrics]
    assert names and len(set(names)) == len(names)
    assert sum(m.primary for m in ds.metrics) == 1, "exactly one primary metric"
    kinds = _view_kinds()
    assert kinds >= {"mean", "ratio", "micro_f1"}  # the parse found the CASE
    unknown = {m.kind for m in ds.metrics} - kinds
    assert not unknown, f"kinds the views do not aggregate: {unknown}"


def _stamps() -> dict[str, list[str]]:
    return {i: [registry.get(i).prompt_hash(), registry.get(i).scorer_version] for i in IDS}


@pytest.fixture(scope="module")
def fresh_stamps() -> dict[str, list[str]]:
    """Every dataset's stamps computed by a new interpreter with another string-hash seed."""
    code = ("import json; from tests.benchmark.test_conformance import _stamps; print(json.dumps(_stamps()))")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("dataset_id", IDS)
def test_stamps_are_stable(dataset_id, fresh_stamps):
    ds = registry.get(dataset_id)
    prompt_hash, scorer_version = ds.prompt_hash(), ds.scorer_version
    assert isinstance(prompt_hash, str) and prompt_hash
    assert isinstance(scorer_version, str) and scorer_version
    assert [ds.prompt_hash(), ds.scorer_version] == [prompt_hash, scorer_version]
    assert fresh_stamps[dataset_id] == [prompt_hash, scorer_version]


# ------------------------------------------------------------------ on data

def _data_root(dataset_id: str, data_dir_factory) -> Path:
    if (FIXTURES / dataset_id).is_dir():
        return FIXTURES
    return data_dir_factory()


@pytest.fixture
def data_root(request):
    dataset_id = request.node.callspec.params["dataset_id"]
    return _data_root(dataset_id, lambda: request.getfixturevalue("data_dir"))


def _load(ds: Any, root: Path) -> list[tuple[str, Any]]:
    try:
        return list(seeded_sample(ds.records(root), ds.id, N_ITEMS))
    except DataMissing as e:
        pytest.skip(f"no data for {ds.id}: {e}")


def _say(item: Item, values: Any) -> str:
    """A response giving `values` the way the prompt asks (choice datasets: `Answer: X`)."""
    if item.answer is None and isinstance(values, list):
        return values[0]  # free text: the first reference answer
    return "Answer: " + (values if isinstance(values, str) else ", ".join(values))


def _episode_response(item: Item, emotion: int) -> str:
    """An episode's transcript (benchmark/episodes/scoring.py): the seeker's emotion reaches `emotion`
    after the first reply of each session, and every reply names every probe's answer."""
    import msgspec

    from benchmark.episodes.dataset import scenario_of
    from benchmark.episodes.scoring import Transcript, TurnRecord

    sc = scenario_of(item)
    facts = " ".join(p.answer for s in sc.sessions for p in s.probes)
    turns: list[TurnRecord] = []
    for s, session in enumerate(sc.sessions):
        turns.append(TurnRecord(s, 0, "seeker", session.opening or "hello", emotion=sc.start_emotion))
        for t in range(1, 1 + max([1, *(p.turn for p in session.probes)])):
            turns.append(TurnRecord(s, t, "companion", f"I hear you. {facts if emotion == 100 else ''}"))
            turns.append(TurnRecord(s, t, "seeker", "thanks", emotion=emotion))
    end = "success" if emotion == 100 else "failure"
    return msgspec.json.encode(Transcript(tuple(turns), end)).decode()


def _gold_response(item: Item) -> str:
    if "episode" in item.meta:  # an episode: the seeker ends at 100 and every probe is recalled
        return _episode_response(item, 100)
    if isinstance(item.gold, dict):  # questionnaire: option -> points; the best one
        return _say(item, max(item.gold, key=item.gold.get))
    return _say(item, item.gold)


def _wrong_responses(item: Item) -> list[str]:
    """Responses that are not the gold answer: the other options one by one, or unrelated text."""
    if "episode" in item.meta:
        return [_episode_response(item, 0)]
    if item.answer is None:
        if isinstance(item.gold, str):  # a code without an answer space (synthetic)
            return [_say(item, c) for c in "ABCD" if c != item.gold]
        return ["xyzzy qwv"]
    gold = item.gold
    if isinstance(gold, dict):
        best = max(gold.values())
        return [_say(item, v) for v, p in gold.items() if p < best]
    if isinstance(gold, str):
        return [_say(item, v) for v in item.answer.values if v != gold]
    others = [_say(item, v) for v in item.answer.values if v not in gold]
    return others or [_say(item, gold[:-1])]  # every option is right: all but one is wrong


def _scores(ds: Any, item: Item, responses: list[str]) -> list[Scored]:
    return [ds.score(item, r) for r in responses]


@pytest.mark.parametrize("dataset_id", IDS)
def test_ids_are_unique_and_stable(dataset_id, data_root):
    ds = registry.get(dataset_id)
    sample = [i for i, _ in _load(ds, data_root)]  # skips when the data is absent
    assert sample and len(set(sample)) == len(sample)
    assert [i for i, _ in _load(ds, data_root)] == sample
    first = [i for i, _ in itertools.islice(ds.records(data_root), 500)]
    assert len(set(first)) == len(first)
    assert [i for i, _ in itertools.islice(ds.records(data_root), 500)] == first


@pytest.mark.parametrize("dataset_id", IDS)
def test_render_and_score(dataset_id, data_root):
    ds = registry.get(dataset_id)
    records = _load(ds, data_root)
    emitted: set[str] = set()
    judged = 0
    for item_id, raw in records:
        item = ds.render(item_id, raw)
        assert item == ds.render(item_id, raw)  # rendering is a pure function of the record
        assert item.id == item_id
        assert item.messages and all(m.content.strip() for m in item.messages)
        assert {m.role for m in item.messages} <= {"system", "user", "assistant"}
        for s in range(1, ds.samples_of(item_id)):
            variant = ds.render_sample(item_id, raw, s)
            assert variant.id == item_id and variant.messages
        # Shortened for a context half its size: same item, same gold, and within the budget unless
        # the prompt without its source is already over it (then nothing of the source is kept).
        # Only long prompts, as in a sweep: a short source can cost less than the cut note.
        short = ds.fit(item_id, raw, item_tokens(item) // 2) if item_tokens(item) > 200 else None
        if short is not None:
            budget = item_tokens(item) // 2
            assert (short.id, short.gold) == (item.id, item.gold) and short.messages
            assert item_tokens(short) <= budget or short.meta.get("kept_chars") == 0, item_id
            assert item_tokens(short) < item_tokens(item)
        unparsed = ds.score(item, "")
        emitted |= set(unparsed.measures or ())
        if item.gold is None:  # a questionnaire item without a key: answered, never scored
            assert unparsed.score is None
            continue
        judged += 1
        right = ds.score(item, _gold_response(item))
        wrong = _scores(ds, item, _wrong_responses(item))
        assert wrong, "no wrong answer to try"
        assert right.prediction is not None, (item_id, _gold_response(item))
        assert right.score == 1.0, (item_id, right)
        assert all(w.score is None or w.score < right.score for w in wrong), (item_id, wrong)
        for s in (right, *wrong):
            assert s.score is None or 0.0 <= s.score <= 1.0
            emitted |= set(s.measures or ())
    assert judged, "no item with a gold answer in the sample"
    read = {k for m in ds.metrics for k in (m.a, m.b, m.c) if k is not None and k != "score"}
    assert read <= emitted, f"metrics read keys no score emitted: {sorted(read - emitted)}"
    assert emitted - read <= INFORMATIONAL_KEYS.get(dataset_id, set()), \
        f"measures no metric reads: {sorted(emitted - read)}"


# ------------------------------------------------------------------ golden stamps
#
# Every stamp a stored row carries (prompt hash, scorer version, the identity's derivation hash,
# the output allowance that enters the run stamp, samples, the metrics recorded with the scorer
# version), a hash of the first GOLDEN_ITEMS items rendered from the fixture or real data, and a
# hash of the scores of the gold and the wrong answers, compared with tests/benchmark/fixtures/
# stamps.json. A refactor of the dataset seam must leave this file untouched. When a change of a
# prompt or scorer is intended (with its version bumped), regenerate it and commit the diff:
#
#     ENGINE_SHARED_DIR=/path/to/shared python -m tests.benchmark.test_conformance --regenerate

GOLDEN = FIXTURES / "stamps.json"
GOLDEN_ITEMS = 10


def _digest(value: Any) -> str:
    import hashlib

    import msgspec

    return hashlib.sha256(msgspec.json.encode(value, order="sorted")).hexdigest()[:16]


def _golden_stamps(ds: Any) -> dict[str, Any]:
    from engine.sweep.identity import derivation

    return {"prompt_hash": ds.prompt_hash(), "scorer_version": ds.scorer_version, "derivation": derivation(ds),
            "max_tokens": ds.max_tokens, "samples": ds.samples, "metrics": _digest(ds.metrics)}


def _golden_data(ds: Any, root: Path) -> dict[str, str] | None:
    """Hashes of the first items as rendered (with their other samples and shortened forms) and scored."""
    try:
        records = list(itertools.islice(ds.records(root), GOLDEN_ITEMS))
    except DataMissing:
        return None
    rendered, scored = [], []
    for item_id, raw in records:
        item = ds.render(item_id, raw)
        rendered.append(item)
        for s in range(1, ds.samples_of(item_id)):
            rendered.append(ds.render_sample(item_id, raw, s))
        if item_tokens(item) > 200 and (short := ds.fit(item_id, raw, item_tokens(item) // 2)) is not None:
            rendered.append(short)
        responses = [_gold_response(item), *_wrong_responses(item), ""] if item.gold is not None else [""]
        scored += [ds.score(item, r) for r in responses]
    return {"items": _digest(rendered), "scores": _digest(scored)}


def _golden_root(dataset_id: str) -> Path:
    from tests.conftest import DATA_DIR

    return FIXTURES if (FIXTURES / dataset_id).is_dir() else DATA_DIR


def _golden_entry(dataset_id: str) -> dict[str, Any]:
    ds = registry.get(dataset_id)
    return {**_golden_stamps(ds), "data": _golden_data(ds, _golden_root(dataset_id))}


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text())


def test_golden_names_only_datasets(golden):
    """A dataset removed is removed from the golden file too (regenerate it)."""
    assert set(golden) <= set(IDS), sorted(set(golden) - set(IDS))


@pytest.mark.parametrize("dataset_id", IDS)
def test_stamps_match_golden(dataset_id, golden):
    ds = registry.get(dataset_id)
    if dataset_id not in golden:
        pytest.skip(f"{dataset_id} is not pinned in {GOLDEN.name}: regenerate it (see above) to pin its stamps")
    want = golden[dataset_id]
    assert _golden_stamps(ds) == {k: v for k, v in want.items() if k != "data"}
    got = _golden_data(ds, _golden_root(dataset_id))
    if got is None or want["data"] is None:
        pytest.skip(f"no data for {dataset_id} here or when the golden file was made: stamps compared only")
    assert got == want["data"]


if __name__ == "__main__":  # --regenerate: rewrite the golden file from the current code
    if sys.argv[1:] != ["--regenerate"]:
        sys.exit("usage: python -m tests.benchmark.test_conformance --regenerate")
    GOLDEN.write_text(json.dumps({i: _golden_entry(i) for i in IDS}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} ({len(IDS)} datasets)")
