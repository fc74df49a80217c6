"""The judgements table, the judge's resume queries and the judge views (store/judgements.*)."""

from __future__ import annotations

import msgspec
import pytest

from benchmark.adapters.judges import rubric_for
from store.side import judgements as J
from store.db import connect
from store.results.writer import insert_rows
from tests.store.helpers import NOW, row

RUBRIC = rubric_for("lcsts")


@pytest.fixture
def con(tmp_path):
    c = connect(tmp_path / "r.duckdb")
    yield c
    c.close()


def _answer(item, response="Summary: s", model="m", dataset="lcsts", sample=0, run_id="old", status="ok",
            measures=None, score=1.0, prediction="s"):
    r = row(model=model, dataset=dataset, item_id=item, sample=sample, status=status, score=score,
            prediction=prediction, measures=measures)
    return msgspec.structs.replace(r, response=response if status == "ok" else None, run_id=run_id)


def _verdict(item, status="ok", response="Summary: s", score=4.0, judge="j", rubric=RUBRIC.version, model="m",
             dataset="lcsts", attempts=1, fields=None):
    return J.JudgementRow(
        model=model, dataset=dataset, item_id=item, sample=0, judge=judge, rubric=rubric,
        answer_md5=J.answer_md5(response), status=status, reason=None, error_class=None,
        verdict=(fields or {"completeness": score, "score": score}) if status in ("ok", "empty") else None,
        score=score if status in ("ok", "empty") else None, raw="{}", prompt_truncated=False, attempts=attempts,
        latency_ms=1.0, input_tokens=1, output_tokens=1, judge_version="jv", run_id="old", started_at=NOW,
        finished_at=NOW)


def test_md5_matches_duckdb(con):
    for text in ("", "Summary: 中文", None):
        assert con.execute("SELECT md5(coalesce(?, ''))", [text]).fetchone()[0] == J.answer_md5(text)


def test_pending_is_an_anti_join_on_the_judged_answer(con):
    insert_rows(con, [_answer(f"i{k}") for k in range(6)]
                + [_answer("i6", run_id="now"), _answer("i7", status="error"), _answer("i0", model="other"),
                   _answer("x", dataset="vcsum")])
    J.insert_judgements(con, [
        _verdict("i0"),  # settled
        _verdict("i1", status="unparsed"),  # settled: a malformed judgement is not asked again
        _verdict("i2", status="error"),  # retried
        _verdict("i3", response="Summary: an older answer"),  # judged another answer
        _verdict("i4", rubric="summary-old"),  # another rubric version
        _verdict("i5", judge="other-judge"),  # another judge
    ])
    args = ("j", "now", ["m"], {"lcsts": RUBRIC.version}, {"lcsts": [f"i{k}" for k in range(8)]})
    assert J.pending_count(con, *args) == 4
    assert J.other_rubrics(con, "j", {"lcsts": RUBRIC.version}) == 1  # reported: those are judged again
    got = list(J.pending(con, *args, page=2))  # pages of 2: keyset pagination covers everything once
    assert [r[2] for r in got] == ["i2", "i3", "i4", "i5"]
    assert got[0][:5] == ("m", "lcsts", "i2", 0, "Summary: s") and got[0][5] == '"s"'
    # items outside the plan (a smaller --limit) are not judged
    assert list(J.pending(con, "j", "now", ["m"], {"lcsts": RUBRIC.version}, {"lcsts": ["i2"]})) == [got[0]]


def test_upsert_replaces_and_adds_attempts(con):
    J.insert_judgements(con, [_verdict("i0", status="error", attempts=3)])
    J.insert_judgements(con, [_verdict("i0", attempts=1)])
    assert con.execute("SELECT status, attempts, score FROM judgements").fetchall() == [("ok", 4, 4.0)]


def _suite(con):
    from benchmark.suites.suite import load_suite
    from store.hierarchy.suite_tables import load_suite_tables

    load_suite_tables(con, load_suite("moodbench"))


def test_judge_metrics_count_the_current_judge_on_the_stored_answer(con):
    insert_rows(con, [_answer(f"i{k}") for k in range(5)])
    con.execute("INSERT INTO dataset_metrics VALUES ('lcsts', 'rouge1_f', 'mean', 'score', NULL, NULL, true, 'v')")
    J.declare_metrics(con, "lcsts", RUBRIC, "j")
    J.insert_judgements(con, [
        _verdict("i0", score=5.0), _verdict("i1", score=3.0), _verdict("i2", status="empty", score=1.0),
        _verdict("i3", status="unparsed"),  # excluded
        _verdict("i4", response="Summary: stale", score=5.0),  # a verdict on another answer: excluded
        _verdict("i4", judge="other-judge", score=5.0),  # not the dataset's current judge: excluded
    ])
    vals = dict(con.execute("SELECT metric, value FROM metric_values WHERE dataset = 'lcsts'").fetchall())
    assert vals["judge_score"] == pytest.approx(3.0) and vals["rouge1_f"] == 1.0
    assert vals["judge_completeness"] == pytest.approx(3.0)
    n = con.execute("SELECT n FROM metric_values WHERE metric = 'judge_score'").fetchone()[0]
    assert n == 3
    _suite(con)
    scores = dict(con.execute("SELECT method, score FROM method_scores WHERE dataset = 'lcsts'").fetchall())
    assert scores == {"judge_score": pytest.approx(50.0), "rouge1_f": pytest.approx(100.0)}  # numeric 1..5
    assert con.execute("SELECT count(*) FROM suite_method_problems WHERE dataset = 'lcsts'").fetchone()[0] == 0
    q = con.execute("SELECT judge, dataset, n_answers, n_ok, n_empty, n_unparsed, n_pending, unparsed_share "
                    "FROM judge_quality").fetchall()
    assert q == [("j", "lcsts", 5, 2, 1, 1, 1, pytest.approx(1 / 3))]


def test_declaring_without_a_judge_keeps_the_last_judge(con):
    J.declare_metrics(con, "lcsts", RUBRIC, "j")
    J.declare_metrics(con, "lcsts", RUBRIC, None)
    assert con.execute("SELECT DISTINCT judge FROM judge_metrics").fetchall() == [("j",)]


def test_position_consistency_pairs_the_two_orders(con):
    ds = "personafeedback"
    rows = []
    # (first order correct?, swapped order correct?) per item; None = unparsed
    for k, (a, b) in enumerate([(1.0, 1.0), (1.0, 0.0), (0.0, 0.0), (0.0, 1.0), (1.0, None)]):
        rows.append(_answer(f"p{k}", dataset=ds, score=a, measures={"orig": a}))
        rows.append(_answer(f"p{k}", dataset=ds, sample=1, score=b or 0.0, prediction=None if b is None else "A",
                            measures={"swap": 1.0}))
    rows.append(_answer("solo", dataset=ds))
    insert_rows(con, rows)
    got = con.execute("SELECT model, dataset, n_pairs, n_answered, agreement, accuracy_first_order "
                      "FROM position_consistency").fetchall()
    assert got == [("m", ds, 5, 4, 0.5, 0.6)]
