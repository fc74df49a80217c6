"""The [judge] table of models.toml and one judgement at a time (engine/lanes/judge.py), with a fake provider."""

from __future__ import annotations

import pytest

from benchmark import registry
from benchmark.adapters.judges import rubric_for
from engine.config.load import load_models
from benchmark.errors import UserError
from engine.lanes.judge import JudgeLane, JudgePlan, plan_judging
from engine.lanes.side_lane import OverBudget
from engine.run.context import Budget, RunContext
from engine.lanes.work import PlannedDataset
from engine.run.progress import Progress
from providers.base import ChatResult
from providers.errors import ErrorClass, ProviderError
from store.db import connect

MODELS = """
[defaults]
max_tokens = 16
max_concurrency = 3

[[models]]
name = "m1"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "small"
context_tokens = 4096
"""
JUDGE = """
[judge]
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "big"
context_tokens = 8192
"""


def _write(tmp_path, text):
    p = tmp_path / "models.toml"
    p.write_text(text)
    return p


def test_judge_table_has_the_model_shape_and_no_defaults(tmp_path):
    cfg = load_models(_write(tmp_path, MODELS + JUDGE))
    j = cfg.judge
    assert (j.name, j.model, j.context_tokens) == ("judge", "big", 8192)
    assert j.max_tokens is None and j.concurrency == 16  # [defaults] are for evaluated models
    assert cfg.models[0].context_tokens == 4096 and [m.name for m in cfg.models] == ["m1"]
    assert load_models(_write(tmp_path, MODELS)).judge is None


@pytest.mark.parametrize("extra, needle", [
    ('name = "m1"\n', "judge: name 'm1' is also a model's name"),
    ("bogus = 1\n", "bogus"),
    ("context_tokens = 10\n", "judge: context_tokens must be >= 256"),
    ('api_key_env = "not a name"\n', "judge: api_key_env"),
])
def test_judge_table_is_validated(tmp_path, extra, needle):
    text = MODELS + JUDGE.replace("context_tokens = 8192\n", "") + extra
    with pytest.raises(UserError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        load_models(_write(tmp_path, text))
    with pytest.raises(UserError, match="judge: base_url"):
        load_models(_write(tmp_path, MODELS + JUDGE.replace("http://127.0.0.1:9/v1", "nope")))


def _con(tmp_path):
    return connect(tmp_path / "r.duckdb")


def test_without_a_judge_the_methods_are_declared_absent_and_reported_once(tmp_path, capsys):
    cfg = load_models(_write(tmp_path, MODELS))
    con = _con(tmp_path)
    planned = [PlannedDataset(registry.get(d), ()) for d in ("lcsts", "longmemeval", "sst2")]
    assert plan_judging(cfg, planned, con, run_id="r", counts={}, fresh=False, models_path="x.toml") is None
    err = capsys.readouterr().err
    assert err.count("no [judge] table in x.toml") == 1 and "lcsts, longmemeval" in err and "sst2" not in err
    rows = con.execute("SELECT dataset, count(*), count(judge) FROM judge_metrics GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [("lcsts", 5, 0), ("longmemeval", 8, 0)]


def test_same_model_as_judge_is_warned(tmp_path, capsys):
    text = MODELS + JUDGE.replace('model = "big"', 'model = "small"')
    cfg = load_models(_write(tmp_path, text))
    p = plan_judging(cfg, [PlannedDataset(registry.get("lcsts"), ())], _con(tmp_path), run_id="r", counts={},
                     fresh=False, models_path="x.toml")
    assert p is not None and "is also evaluated as 'm1'" in capsys.readouterr().err


class FakeJudge:
    def __init__(self, reply):
        self.reply, self.calls = reply, []

    async def chat(self, messages):
        self.calls.append(messages)
        if isinstance(self.reply, Exception):
            raise self.reply
        if isinstance(self.reply, ChatResult):
            return self.reply
        return ChatResult(text=self.reply, model_version="big-1", input_tokens=100, output_tokens=20, attempts=2)

    async def aclose(self):
        pass


def _lane(tmp_path, reply, judge_ctx=8192, budget=None, extra=""):
    cfg = load_models(_write(tmp_path, MODELS + JUDGE.replace("8192", str(judge_ctx)) + extra))
    ds = registry.get("lcsts")
    raw = {"_id": "1", "text": "今天上午，市政府宣布新的公交线路将于下月开通。", "summary": "新公交线路下月开通"}
    plan = JudgePlan(judge=cfg.judge, rubrics={"lcsts": rubric_for("lcsts")},
                     planned={"lcsts": PlannedDataset(ds, (("1", raw),))}, budgets={"m1": {"lcsts": 4000}}, run_id="run1",
                     backlog=0, expected=0)
    lane = JudgeLane(plan, RunContext(_con(tmp_path), progress=Progress(quiet=True), budget=budget))
    fake = FakeJudge(reply)
    lane._providers = {k: fake for k in lane._providers}
    return lane, fake


GOOD = '{"completeness": 5, "conciseness": 4, "faithfulness": 5, "fluency": 4, "reason": "fine"}'


@pytest.mark.parametrize("reply, status, score", [
    (GOOD, "ok", 4.5),
    ("It reads well, 4/5.", "unparsed", None),
    ("I'm sorry, I can't judge this.", "refused", None),
    (ChatResult(text="", blocked="refusal"), "refused", None),
    (ProviderError(ErrorClass.RATE_LIMIT, "slow down", status=429, attempts=9), "error", None),
])
async def test_judge_one_stores_every_outcome_with_its_raw_text(tmp_path, reply, status, score):
    lane, fake = _lane(tmp_path, reply)
    row = await lane.judge_one("m1", "lcsts", "1", 0, "Summary: 新线路下月开通", "新线路下月开通")
    assert (row.status, row.score) == (status, score) and len(fake.calls) == 1
    prompt = fake.calls[0][0].content
    assert "今天上午" in prompt and "新公交线路下月开通" in prompt and "新线路下月开通" in prompt
    assert row.judge == "judge" and row.rubric == rubric_for("lcsts").version and row.run_id == "run1"
    if status == "ok":
        assert row.verdict["completeness"] == 5.0 and row.reason == "fine" and row.raw == GOOD
        assert (row.attempts, row.judge_version, row.prompt_truncated) == (2, "big-1", False)
    if status == "unparsed":
        assert row.raw == "It reads well, 4/5." and row.verdict is None and "JSON" in row.reason
    if status == "error":
        assert row.error_class == "rate_limit" and row.attempts == 9 and "slow down" in row.reason


async def test_an_empty_answer_gets_the_floor_without_asking(tmp_path):
    lane, fake = _lane(tmp_path, GOOD)
    row = await lane.judge_one("m1", "lcsts", "1", 0, "", None)
    assert (row.status, row.score, fake.calls) == ("empty", 1.0, []) and "empty answer" in row.reason


async def test_an_answer_too_long_for_the_judge_is_unjudgeable_with_a_reason(tmp_path):
    lane, fake = _lane(tmp_path, GOOD, judge_ctx=300)
    row = await lane.judge_one("m1", "lcsts", "1", 0, "长" * 500, "长" * 500)
    assert (row.status, fake.calls) == ("unjudgeable", []) and "context_tokens (300)" in row.reason


async def test_a_rubric_bug_is_an_error_retried_later_not_a_crash(tmp_path):
    lane, _ = _lane(tmp_path, GOOD)
    row = await lane.judge_one("m1", "lcsts", "missing-item", 0, "x", "x")
    assert row.status == "error" and row.error_class == "judge" and "judging failed" in row.reason


def test_a_judge_without_its_key_is_absent_with_a_note(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ENGINE_NO_SUCH_KEY", raising=False)
    cfg = load_models(_write(tmp_path, MODELS + JUDGE + 'api_key_env = "ENGINE_NO_SUCH_KEY"\n'))
    p = plan_judging(cfg, [PlannedDataset(registry.get("lcsts"), ())], _con(tmp_path), run_id="r", counts={},
                     fresh=False, models_path="x.toml")
    assert p is None
    assert "the judge's environment variable ENGINE_NO_SUCH_KEY is not set" in capsys.readouterr().err


PRICED = "price = { input_per_mtok = 1000.0, output_per_mtok = 1000.0 }\n"


async def test_a_priced_judges_calls_count_against_the_budget(tmp_path):
    budget = Budget(10.0)
    lane, fake = _lane(tmp_path, GOOD, budget=budget, extra=PRICED)
    row = await lane.judge_one("m1", "lcsts", "1", 0, "Summary: 新线路下月开通", "新线路下月开通")
    assert row.status == "ok" and len(fake.calls) == 1
    assert budget.spent == pytest.approx((100 + 20) * 1000 / 1e6) and budget.reserved == pytest.approx(0)


async def test_a_judge_call_the_budget_cannot_cover_is_not_made(tmp_path):
    budget = Budget(0.001)  # less than one call's bound: its prompt in and max_tokens out at $1000/Mtok
    lane, fake = _lane(tmp_path, GOOD, budget=budget, extra=PRICED)
    with pytest.raises(OverBudget):
        await lane.judge_one("m1", "lcsts", "1", 0, "Summary: 新线路下月开通", "新线路下月开通")
    assert fake.calls == [] and budget.stopped and budget.spent == 0
