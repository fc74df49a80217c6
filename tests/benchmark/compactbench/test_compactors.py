"""Built-in compactors, the plugin seam, and the [compactbench] section."""

from __future__ import annotations

import json

import pytest

from benchmark.compactbench import prompts
from benchmark.compactbench.artifact import CompactionArtifact, to_json
from benchmark.compactbench.cases import Transcript, Turn
from benchmark.compactbench.compactors import (
    CompactorContext,
    FullTranscript,
    NaiveSummary,
    StructuredStateExtraction,
    TruncateLastN,
)
from benchmark.compactbench.config import ConfigError, parse_section
from benchmark.compactbench.modes import COMPAT, STRICT
from benchmark.compactbench.plugins import PluginError, instantiate, load_class

TURNS = (Turn(0, "user", "Let's plan the auth rewrite with Tara."), Turn(1, "assistant", "Constraints?"),
         Turn(2, "user", "Critical: never skip code review.", ("critical_constraint",)),
         Turn(3, "user", "Lunch?", ("distractor",)), Turn(4, "assistant", "Noted.", ("distractor",)))
MORE = (Turn(5, "user", "What next?", ("continuation",)), Turn(6, "assistant", "Write the plan.", ("continuation",)))


class FakeLLM:
    name = "fake"

    def __init__(self, reply: str = "  A summary.  "):
        self.reply, self.calls = reply, []

    async def complete(self, prompt: str, *, json_object: bool = False) -> str:
        self.calls.append((prompt, json_object))
        return self.reply


async def _cycles(cls, mode, options=None):
    """Two cycles fed as the runner feeds them in `mode`."""
    c = cls(CompactorContext(mode=mode, options=options or {}))
    first = await c.compact(Transcript(TURNS), None)
    given = Transcript(MORE) if mode.incremental else Transcript(TURNS + MORE)
    return first, await c.compact(given, first)


@pytest.mark.parametrize("cls,options", [(FullTranscript, None), (TruncateLastN, {"n": 3}), (TruncateLastN, None)])
async def test_baselines_without_a_model_agree_across_modes(cls, options):
    compat = await _cycles(cls, COMPAT, options)
    strict = await _cycles(cls, STRICT, options)
    assert compat == strict
    text = compat[1].summary_text
    if cls is FullTranscript:
        assert text == "\n".join(f"{t.role}: {t.content}" for t in TURNS + MORE)
        assert compat[1].selected_source_turn_ids == tuple(range(7))
    elif options:
        assert text == "assistant: Noted.\nuser: What next?\nassistant: Write the plan."


async def test_naive_summary_is_compactbench_010s_in_compat(cb):
    from compactbench.compactors import NaiveSummaryCompactor
    from compactbench.contracts import Transcript as CbTranscript
    from compactbench.providers import MockProvider

    llm = FakeLLM()
    mine = await NaiveSummary(CompactorContext(mode=COMPAT, llm=llm)).compact(Transcript(TURNS), None)
    mock = MockProvider(default="  A summary.  ")
    theirs = await NaiveSummaryCompactor(mock, "fake").compact(
        CbTranscript.model_validate({"turns": _turn_dicts(TURNS)}))
    assert llm.calls == [(mock.calls[0].prompt, False)]
    assert mine.summary_text == theirs.summary_text == "A summary."
    assert list(mine.selected_source_turn_ids) == theirs.selected_source_turn_ids
    # Compat ignores the previous artifact, as 0.1.0 does; strict updates it from the new turns only.
    await NaiveSummary(CompactorContext(mode=COMPAT, llm=llm)).compact(Transcript(TURNS + MORE), mine)
    assert "SUMMARY SO FAR" not in llm.calls[-1][0]
    await NaiveSummary(CompactorContext(mode=STRICT, llm=llm)).compact(Transcript(MORE), mine)
    assert llm.calls[-1][0] == prompts.NAIVE_SUMMARY_UPDATE.format(
        previous="A summary.", transcript=prompts.render_turns(MORE))


def _turn_dicts(turns):
    return [{"id": t.id, "role": t.role, "content": t.content, "tags": list(t.tags)} for t in turns]


@pytest.mark.parametrize("reply", ['{"forbidden_behaviors": ["skip code review"], "entity_map": {"Tara": "lead"}}',
                                   "no json here", '```json\n{"immutable_facts": [1, "x"]}\n```'])
async def test_structured_state_is_compactbench_010s_in_compat(cb, reply):
    from compactbench.compactors import StructuredStateCompactor
    from compactbench.contracts import Transcript as CbTranscript
    from compactbench.providers import MockProvider

    llm = FakeLLM(reply)
    mine = await StructuredStateExtraction(CompactorContext(mode=COMPAT, llm=llm)).compact(Transcript(TURNS), None)
    mock = MockProvider(default=reply)
    theirs = await StructuredStateCompactor(mock, "fake").compact(CbTranscript.model_validate({"turns": _turn_dicts(TURNS)}))
    assert llm.calls == [(mock.calls[0].prompt, True)] and mock.calls[0].response_format == prompts.JSON_RESPONSE_FORMAT
    doc = json.loads(to_json(mine))
    assert doc["structured_state"] == theirs.structured_state.model_dump()
    assert doc["warnings"] == theirs.warnings and doc["summary_text"] == ""
    assert mine.method_metadata["parse_ok"] is (reply != "no json here")


async def test_structured_state_strict_rejects_partial_json_and_records_it():
    llm = FakeLLM('{"forbidden_behaviors": ["skip code review"]}')
    art = await StructuredStateExtraction(CompactorContext(mode=STRICT, llm=llm)).compact(Transcript(TURNS), None)
    assert art.structured_state.forbidden_behaviors == () and art.method_metadata["parse_ok"] is False
    assert art.warnings[0].startswith("structured state rejected")
    prev = CompactionArtifact(structured_state=art.structured_state, selected_source_turn_ids=(0, 1, 2, 3, 4))
    nxt = await StructuredStateExtraction(CompactorContext(mode=STRICT, llm=llm)).compact(Transcript(MORE), prev)
    assert "STATE SO FAR" in llm.calls[-1][0] and nxt.selected_source_turn_ids == tuple(range(7))


PLUGIN = '''
from benchmark.compactbench.artifact import CompactionArtifact

class Keep:
    version = "0.1"
    def __init__(self, ctx):
        self.ctx = ctx
    async def compact(self, transcript, previous_artifact):
        return {"summaryText": transcript.turns[-1].content}

class NoArgs:
    async def compact(self, transcript, previous_artifact):
        return CompactionArtifact()

class Sync:
    def compact(self, transcript, previous_artifact):
        return None
'''


async def test_plugins_from_a_file_or_a_module(tmp_path, monkeypatch):
    (tmp_path / "my_compactor.py").write_text(PLUGIN)
    cls = load_class("my_compactor.py:Keep", base_dir=tmp_path)
    obj = instantiate(cls, CompactorContext(mode=COMPAT, options={"a": 1}))
    assert obj.ctx.options == {"a": 1} and await obj.compact(Transcript(TURNS), None) == {"summaryText": "Noted."}
    assert isinstance(await instantiate(load_class(f"{tmp_path}/my_compactor.py:NoArgs"),
                                        CompactorContext(mode=COMPAT)).compact(Transcript(TURNS), None),
                      CompactionArtifact)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_class("my_compactor:Keep").__name__ == "Keep"
    for spec, msg in (("nofile.py:X", "file not found"), ("my_compactor:Nope", "no class 'Nope'"),
                      ("my_compactor:Sync", "async def compact"), ("no.such.module:X", "cannot import"),
                      ("justaname", "expected")):
        with pytest.raises(PluginError, match=msg):
            load_class(spec, base_dir=tmp_path)


def test_config_section_validation():
    names = ["a", "b"]
    cfg = parse_section({}, names, "m.toml")
    assert cfg.mode == "compat" and cfg.case_slots == 3 and cfg.drift_cycles == 2 and len(cfg.compactors) == 4
    cfg = parse_section({"mode": "strict", "suite": ["starter", "elite_practice"], "targets": ["b"],
                         "compactors": [{"name": "s", "kind": "naive-summary", "model": "a"},
                                        {"name": "p", "plugin": "x.py:C", "options": {"k": 1}}]}, names, "m.toml")
    assert cfg.targets == ("b",) and cfg.compactors[1].options == {"k": 1}
    bad = [({"mode": "loose"}, "mode"), ({"targets": ["zz"]}, "targets: 'zz'"), ({"case_slots": 0}, "case_slots"),
           ({"drift_cycles": 9}, "drift_cycles"), ({"difficulty": "insane"}, "difficulty"),
           ({"compactors": [{"name": "x"}]}, "exactly one of"), ({"compactors": [{"name": "x", "kind": "magic"}]},
                                                                   "unknown kind"),
           ({"compactors": [{"name": "x", "kind": "naive-summary", "model": "zz"}]}, "model 'zz'"),
           ({"compactors": [{"name": "x", "kind": "naive-summary"}] * 2}, "duplicate"),
           ({"compactors": [{"name": "a/b", "kind": "naive-summary"}]}, "name must"), ({"bogus": 1}, "unknown key")]
    for raw, msg in bad:
        with pytest.raises(ConfigError, match=msg) as e:
            parse_section(raw, names, "m.toml")
        assert str(e.value).startswith("m.toml: [compactbench]") and "\n" not in str(e.value)
