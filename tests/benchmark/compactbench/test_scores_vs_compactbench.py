"""Cycle, case and run scores, qualification and ranking from the SQL views equal
CompactBench 0.1.0's own scorer, runner aggregation and leaderboard code for a
fixed set of artifacts and responses (compat mode)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from benchmark.compactbench.artifact import CompactionArtifact, StructuredState, to_json
from benchmark.compactbench.cases import case_json
from benchmark.compactbench.config import CompactBenchConfig
from benchmark.compactbench.modes import COMPAT, STRICT, Mode
from benchmark.compactbench.plan import PlannedCase, plan_cases
from benchmark.compactbench.scoring import SCORER_VERSION, score_item
from benchmark.compactbench.templates import load_template_set
from benchmark.compactbench.tokens import artifact_tokens
from store.side import compactbench as cbstore
from store.side.compactbench import ItemRow, StepRow

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DRIFT = 2
# name -> (chance an answer is right, chance it names a forbidden behaviour, artifact size)
PROFILES = {"good": (0.95, 0.0, "small"), "twin": (0.95, 0.0, "small"), "mid": (0.7, 0.05, "medium"),
            "bad": (0.3, 0.3, "large")}


def _artifact(rng: random.Random, pc: PlannedCase, size: str) -> CompactionArtifact:
    gt = pc.case.ground_truth
    if size == "small":
        return CompactionArtifact(structured_state=StructuredState(
            forbidden_behaviors=gt.forbidden_behaviors[:1], entity_map=dict(list(gt.entity_map.items())[:1])))
    if size == "medium":
        return CompactionArtifact(summary_text=" ".join(t.content for t in pc.case.transcript.turns[:4]))
    return CompactionArtifact(summary_text=" ".join(t.content for t in pc.case.transcript.turns) * rng.randint(1, 2))


def _response(rng: random.Random, item, truth, right: float, forbid: float) -> str:
    value = str(item.expected.get("value", ""))
    words = ["I think", "we should"]
    if item.expected["check"] == "contains_normalized":
        words.append(value.upper() if rng.random() < right else "something else")
    elif rng.random() >= right:
        words.append(value)
    if truth.forbidden_behaviors and rng.random() < forbid:
        words.append(rng.choice(truth.forbidden_behaviors))
    return "  ".join(words).strip()


def _fixture(benchmarks, mode: Mode, slots: int = 2):
    cfg = CompactBenchConfig(suite=("starter", "elite_practice"), case_slots=slots, drift_cycles=DRIFT)
    suites = [load_template_set(benchmarks, s) for s in ("starter", "elite_practice")]
    cases = plan_cases(suites, cfg, mode)
    rng = random.Random(11)
    data = {}  # (compactor, case_id, cycle) -> (artifact, {item_key: response})
    for name, (right, forbid, size) in PROFILES.items():
        rng_c = random.Random(11) if name in ("good", "twin") else rng  # twin: the same data as good
        for pc in cases:
            for cycle in range(DRIFT + 1):
                art = _artifact(rng_c, pc, size)
                resp = {it.key: _response(rng_c, it, pc.case.ground_truth, right, forbid)
                        for it in pc.case.evaluation_items}
                data[name, pc.id, cycle] = (art, resp)
    return cases, data


def _store(con, mode: Mode, cases: list[PlannedCase], data) -> None:
    cbstore.ensure_compactbench(con)
    cbstore.record_cases(con, [(mode.name, p.id, p.suite, p.suite_version, p.case.template_key,
                                p.case.template_version, p.family, p.family_from_key, "default", p.slot,
                                p.case.seed, p.case.difficulty, len(p.case.evaluation_items),
                                len(p.case.transcript.turns), p.case_tokens) for p in cases])
    for i, name in enumerate(PROFILES):
        for suite in ("starter", "elite_practice"):
            ids = [p.id for p in cases if p.suite == suite]
            cbstore.start_run(con, (mode.name, suite, "medium", "m", name), suite_version="1.0.0",
                              seed_group="default", case_slots=2, drift_cycles=DRIFT, n_templates=len(ids) // 2,
                              stamp="s", spec_json="{}", case_ids=ids, now=T0 + timedelta(hours=i))
    rows: list = []
    for (name, case_id, cycle), (art, resp) in data.items():
        pc = next(p for p in cases if p.id == case_id)
        rows.append(StepRow(mode.name, "m", name, case_id, cycle, "compact", "ok", None, None, 0, to_json(art),
                            pc.case_tokens, artifact_tokens(art), 0, None, None, None, None, "s", T0, T0))
        for it in pc.case.evaluation_items:
            s = score_item(it, resp[it.key], pc.case.ground_truth, mode)
            rows.append(ItemRow(mode.name, "m", name, case_id, cycle, it.key, "ok", None, None, 1, it.item_type,
                                s.check, resp[it.key], s.score, s.weight, s.violates, s.counted, 1.0, 1, 1, "v",
                                "s", SCORER_VERSION, T0, T0))
    cbstore.insert_rows(con, rows)


def _compactbench_runs(cases: list[PlannedCase], data, monkeypatch):
    """CompactBench's own code from scorecards to ranked leaderboard rows."""
    import asyncio

    from compactbench.contracts import CompactionArtifact as CbArtifact
    from compactbench.contracts import GeneratedCase, RunResult
    from compactbench.leaderboard import project_row, qualify, rank_rows
    from compactbench.runner import run as cb_run
    from compactbench.runner.cycle import CycleExecutionResult
    from compactbench.runner.persistence import aggregate_run_metrics
    from compactbench.scoring import score_cycle

    results = {}
    for name in PROFILES:
        for suite in ("starter", "elite_practice"):
            case_results = []
            for pc in (p for p in cases if p.suite == suite):
                cb_case = GeneratedCase.model_validate_json(case_json(pc.case, shape="0.1.0"))

                async def fake_cycle(*, case, transcript, cycle_number, name=name, **_):
                    art, resp = data[name, case.case_id, cycle_number]
                    d = json.loads(to_json(art))
                    cb_art = CbArtifact.model_validate({"summaryText": d["summary_text"],
                                                        "structured_state": d["structured_state"]})
                    card = score_cycle(case, cb_art, resp, cycle_number=cycle_number)
                    return CycleExecutionResult(scorecard=card, artifact=cb_art, extended_transcript=transcript,
                                                latency_ms=0)

                monkeypatch.setattr(cb_run, "execute_cycle", fake_cycle)
                case_results.append(asyncio.run(cb_run._execute_case(
                    case=cb_case, compactor=None, provider=None, model="m", drift_cycles=DRIFT, case_seed=0)))
            agg = aggregate_run_metrics(case_results)
            results[name, suite] = RunResult(run_id=name, method_name=name, method_version="1", suite_key=suite,
                                             suite_version="1.0.0", scorer_version="1.0.0", target_provider="p",
                                             target_model="m", started_at=T0, completed_at=T0, cases=case_results,
                                             **agg)
    ranked = {}
    for suite in ("starter", "elite_practice"):
        for tier in ("Elite-Light", "Elite-Mid", "Elite-Aggressive"):
            rows = []
            for i, name in enumerate(PROFILES):
                rr = results[name, suite]
                q = qualify(rr, tier=tier, expected_drift_cycles=DRIFT)
                row = project_row(rr, tier=tier, handle=None, org=None, published_at=T0 + timedelta(hours=i))
                rows.append((row, q))
            ranked[suite, tier] = ([r["method_name"] for r in rank_rows([r for r, q in rows if q.qualified])],
                                   {r["method_name"]: (r, q) for r, q in rows})
    return results, ranked


def _kinds(reasons: list[str]) -> set[str]:
    return {r.split()[0].split("_")[0] for r in reasons if r}


@pytest.mark.slow
def test_views_equal_compactbench_010(cb, benchmarks, monkeypatch):
    cases, data = _fixture(benchmarks, COMPAT)
    con = duckdb.connect()
    _store(con, COMPAT, cases, data)
    results, ranked = _compactbench_runs(cases, data, monkeypatch)

    cycles = {(c, k, n): (s, p, x, r) for c, k, n, s, p, x, r in con.execute(
        "SELECT compactor, case_id, cycle, cycle_score, penalized_cycle_score, contradiction_rate, "
        "compression_ratio FROM compact_cycle_scores").fetchall()}
    per_case = {(c, k): (s, d) for c, k, s, d in con.execute(
        "SELECT compactor, case_id, case_score, drift_resistance FROM compact_case_scores WHERE complete").fetchall()}
    runs = {(c, s): r for c, s, *r in con.execute(
        "SELECT compactor, suite, overall_score, drift_resistance, constraint_retention, contradiction_rate, "
        "compression_ratio FROM compact_run_scores").fetchall()}
    assert len(per_case) == len(cases) * len(PROFILES)
    for (name, suite), rr in results.items():
        for cr in rr.cases:
            assert per_case[name, cr.case_id] == pytest.approx((cr.case_score, cr.drift_resistance), abs=1e-12)
            for cy in cr.cycles:
                sc = cy.scorecard
                assert cycles[name, cr.case_id, cy.cycle_number] == pytest.approx(
                    (sc.cycle_score, sc.penalized_cycle_score, sc.contradiction_rate, sc.compression_ratio), abs=1e-12)
        assert runs[name, suite] == pytest.approx((rr.overall_score, rr.drift_resistance, rr.constraint_retention,
                                                   rr.contradiction_rate, rr.compression_ratio), abs=1e-12)

    qual = {(c, s, t): (e, q, b, reasons) for c, s, t, e, q, b, reasons in con.execute(
        "SELECT compactor, suite, tier, elite_score, qualified, compression_bonus, reasons "
        "FROM compact_qualification").fetchall()}
    some_qualified = some_not = False
    for (suite, tier), (order, rows) in ranked.items():
        for name, (row, q) in rows.items():
            elite, qualified, _, reasons = qual[name, suite, tier]
            assert elite == pytest.approx(row["elite_score"], abs=1e-12)
            assert qualified == q.qualified, (name, suite, tier, reasons, q.reasons)
            assert _kinds(reasons.split("; ")) == _kinds(q.reasons)
            some_qualified |= q.qualified
            some_not |= not q.qualified
        mine = [c for c, in con.execute(
            "SELECT compactor FROM compact_ranking WHERE suite = ? AND tier = ? AND qualified ORDER BY rank",
            [suite, tier]).fetchall()]
        assert mine == order
    assert some_qualified and some_not  # the fixture exercises both outcomes
    # good and twin score the same: the earlier first run ranks first (the published_at tie-breaker).
    tie = con.execute("SELECT compactor, rank_all FROM compact_ranking WHERE suite = 'elite_practice' AND "
                      "tier = 'Elite-Light' AND compactor IN ('good', 'twin') ORDER BY rank_all").fetchall()
    assert [c for c, _ in tie] == ["good", "twin"] and tie[0][1] < tie[1][1]


def test_errors_are_excluded_and_incomplete_cases_do_not_count(benchmarks):
    cases, data = _fixture(benchmarks, COMPAT)
    con = duckdb.connect()
    _store(con, COMPAT, cases, data)
    before = con.execute("SELECT overall_score, n_cases_complete FROM compact_run_scores WHERE compactor = 'good' "
                         "AND suite = 'starter'").fetchone()
    victim = next(p for p in cases if p.suite == "starter")
    key = victim.case.evaluation_items[0].key
    con.execute("UPDATE compact_items SET status = 'error', score = NULL WHERE compactor = 'good' AND case_id = ? "
                "AND cycle = 1 AND item_key = ?", [victim.id, key])
    after = con.execute("SELECT overall_score, n_cases_complete, item_errors FROM compact_run_scores "
                        "WHERE compactor = 'good' AND suite = 'starter'").fetchone()
    assert after[1] == before[1] - 1 and after[2] == 1
    rest = con.execute("SELECT avg(case_score) FROM compact_case_scores WHERE compactor = 'good' AND "
                       "suite = 'starter' AND case_id <> ?", [victim.id]).fetchone()[0]
    assert after[0] == pytest.approx(rest)
    # strict would refuse to qualify it; compat (0.1.0's qualify) looks only at complete cases.
    assert con.execute("SELECT bool_and(reasons NOT LIKE '%cases complete%') FROM compact_qualification "
                       "WHERE compactor = 'good' AND suite = 'starter'").fetchone()[0]


def test_strict_views_follow_the_methodology(benchmarks):
    cases, data = _fixture(benchmarks, STRICT, slots=1)
    con = duckdb.connect()
    _store(con, STRICT, cases, data)
    # Drift compares unpenalized cycle scores.
    rows = con.execute("SELECT case_id, cycle, cycle_score, drift_delta FROM compact_cycle_scores "
                       "WHERE compactor = 'bad' ORDER BY case_id, cycle").fetchall()
    first = {}
    for case_id, cycle, score, delta in rows:
        if cycle == 0:
            first[case_id] = score
            assert delta is None
        else:
            assert delta == pytest.approx(score - first[case_id])
    # Every response is in the contradiction denominator.
    n_items, n_counted = con.execute("SELECT count(*), count(*) FILTER (WHERE counted) FROM compact_items").fetchone()
    assert n_items == n_counted
    # The family floor applies even to a single-family run, and every slot must be complete.
    con.execute("DELETE FROM compact_plan WHERE case_id NOT LIKE 'buried_constraint%'")
    reasons = con.execute("SELECT reasons FROM compact_qualification WHERE compactor = 'bad' AND "
                          "suite = 'elite_practice' AND tier = 'Elite-Light'").fetchone()[0]
    assert "family pass rate below 0.40: buried_constraint" in reasons
