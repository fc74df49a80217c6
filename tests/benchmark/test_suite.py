"""The suite format: the two shipped suites and every validation error."""

from __future__ import annotations

import textwrap
from collections import Counter
from pathlib import Path

import pytest

from benchmark.suites.suite import SuiteError, load_suite

# The MoodBench 1.0 paper's Table 5: (main, sub, level, task) -> datasets.
PAPER = """
values_safety values L bias_detection: crows_pairs stereoset bbq safetybench_ub
values_safety values M morality_detection: safetybench_em
values_safety safety L content_safety: safetybench_off
values_safety safety M information_security: safetybench_pp
values_safety safety M user_safety: safetybench_mh safetybench_ph
values_safety safety H high_risk_behaviour: safetybench_ia
foundational nlu L text_classification: ag_news thucnews
foundational nlu L text_matching: lcqmc qqp
foundational nlu M extractive_rc: cmrc2018
foundational nlu M word_sense: wic
foundational nlu H reading_comprehension: multirc record
foundational reasoning L entailment: ocnli mnli rte
foundational reasoning L simple_causal: copa
foundational reasoning M coreference: wsc
foundational reasoning M multi_turn_dialogue: mutual
foundational reasoning H first_order_logic: folio
foundational reasoning H complex_logic: logiqa
foundational generation L summarization: lcsts cnewsum vcsum
foundational commonsense L daily_scenarios: hellaswag
foundational commonsense L commonsense_qa: cosmos_qa
foundational commonsense L physical_commonsense: piqa
foundational commonsense M exams: agieval
foundational commonsense M multi_task_knowledge: mmlu_pro cmmlu ceval
foundational commonsense H truthfulness: truthfulqa
emotional emotion_recognition L sentiment_polarity: imdb sst2 dianping
emotional emotion_recognition M coarse_grained_emotion: moodbench1
emotional emotion_recognition M irony_detection: semeval2018_task3
emotional emotion_recognition M metaphor_detection: vua20
emotional emotion_recognition H fine_grained_emotion: goemotions cped edos
emotional emotion_recognition H complex_scenario_emotion: emobench1
emotional emotion_understanding L emotion_cause: moodbench2 emobench2
emotional emotion_understanding M emotion_intensity: semeval2018_task1
emotional emotion_management H emotion_strategy: moodbench3
emotional empathetic_response M empathetic_expression: emobench3
emotional empathetic_response H contextual_empathy: moodbench4
emotional comprehensive_ei L eq_tests: eq60 iri30
emotional comprehensive_ei M interpersonal_test: interpersonal_relationship_test
emotional comprehensive_ei H communication_test: effective_communication_test
companionship memory_personalization L personalization: personafeedback
companionship memory_personalization M sequence_recall: booksort
companionship memory_personalization H long_term_recall: longmemeval
"""


def _flatten(suite) -> list[str]:
    return [
        f"{a.id} {s.id} {t.level} {t.id}: " + " ".join(r.id for r in t.datasets)
        for a, s, t in suite.tasks()
    ]


def test_moodbench_is_table_5_of_the_paper():
    s = load_suite("moodbench")
    assert _flatten(s) == PAPER.strip().splitlines()
    assert len(s.tasks()) == 41 and len(s.datasets) == 60
    assert s.gate == "values_safety" and s.tau == 60 and s.missing_levels == "table"
    assert {a.id: a.weight for a in s.abilities} == {
        "values_safety": None, "foundational": 0.3, "emotional": 0.4, "companionship": 0.3}
    # every other weight is 1, every method the default (primary metric, ratio) except the
    # judged datasets': a judge metric and the reference's metric (docs/judges.md)
    assert {x.weight for a, sa, t in s.tasks() for x in (sa, t, *t.datasets)} == {1.0}
    judged = {"lcsts", "cnewsum", "vcsum", "longmemeval"}
    assert {(m.metric, m.normalization) for d in s.dataset_specs if d.id not in judged
            for m in d.methods} == {(None, "ratio")}
    methods = {d.id: [(m.metric, m.normalization, m.min, m.max, m.weight) for m in d.methods]
               for d in s.dataset_specs if d.id in judged}
    summary = [("judge_score", "numeric", 1.0, 5.0, 1.0), ("rouge1_f", "ratio", None, None, 1.0)]
    assert methods == {"lcsts": summary, "cnewsum": summary, "vcsum": summary,
                       "longmemeval": [("judge_accuracy", "ratio", None, None, 1.0), ("recall", "ratio", None, None, 1.0)]}
    rows = {(d.levels, d.level): d.weight for d in s.difficulty}
    assert rows[("LMH", "M")] == 0.55 and rows[("LH", "H")] == 0.4 and rows[("MH", "M")] == 0.7
    # the sweep's contract
    assert (s.name, s.version, s.sample_size, s.seed) == ("moodbench", "1.0", 300, 20250826)
    assert isinstance(s.datasets, tuple) and s.datasets[0] == "crows_pairs"


def test_reference_suite_matches_the_spec():
    s = load_suite("moodbench-reference")
    leaves = Counter(r.id for _, _, t in s.tasks() for r in t.datasets)
    assert len(leaves) == 63 and sum(leaves.values()) == 65
    assert leaves["cped"] == 3 and {"c3", "samsum", "pqemotion4", "logicnli"} <= set(leaves)
    assert "logiqa" not in leaves
    assert s.gate is None and s.tau is None and s.missing_levels == "renormalize"
    assert {a.weight for a in s.abilities} == {1.0}
    subs = {sa.id: {t.level for t in sa.tasks} for _, sa, _ in s.tasks()}
    assert subs["memory"] == {"L", "H"} and subs["personalisation"] == {"L", "M"}
    assert subs["safety"] == {"L", "M"} and subs["emotion_management"] == {"M"}
    # every departure from the paper is commented
    text = Path(s.source).read_text()
    assert text.count("DIFF:") >= 20


GOOD = """
[suite]
name = "tiny"
version = "2"
[scoring]
gate = "g"
tau = 50
[[ability]]
id = "g"
[[ability.sub_ability]]
id = "gs"
[[ability.sub_ability.task]]
id = "gt"
level = "L"
datasets = ["a"]
[[ability]]
id = "main"
weight = 2
[[ability.sub_ability]]
id = "ms"
[[ability.sub_ability.task]]
id = "mt"
level = "H"
datasets = ["a", { id = "b", weight = 3 }]
[datasets]
a = "Dataset A"
b = { methods = [
  { metric = "acc", normalization = "ratio", weight = 2 },
  { metric = "likert", normalization = "numeric", min = 1, max = 5 },
  { metric = "grade", normalization = "grade", grades = { good = 90, bad = 10 } },
] }
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_a_valid_small_suite(tmp_path):
    s = load_suite(str(_write(tmp_path, GOOD)))
    assert s.datasets == ("a", "b") and s.version == "2"
    assert [a.weight for a in s.abilities] == [None, 2.0]
    b = s.dataset_specs[1]
    assert [(m.id, m.normalization, m.weight) for m in b.methods] == [
        ("acc", "ratio", 2.0), ("likert", "numeric", 1.0), ("grade", "grade", 1.0)]
    assert b.methods[2].grades == (("good", 90.0), ("bad", 10.0))
    assert s.abilities[1].sub_abilities[0].tasks[0].datasets[1].weight == 3.0


@pytest.mark.parametrize(
    "old, new, message",
    [
        ('datasets = ["a", { id = "b", weight = 3 }]', 'datasets = ["a", "zz"]',
         "ability[main].sub_ability[ms].task[mt].datasets[1]: undefined dataset 'zz'"),
        ('datasets = ["a", { id = "b", weight = 3 }]', 'datasets = ["a", "b", "a"]',
         "task[mt].datasets[2]: dataset 'a' listed twice under one task"),
        ("weight = 2", "weight = 0", "ability[main].weight: weight must be a number > 0, got 0"),
        ("weight = 2", "weight = -1.5", "weight must be a number > 0"),
        ("weight = 2", 'weight = "2"', "weight must be a number > 0"),
        ("weight = 2", "weight = true", "weight must be a number > 0"),
        ('{ id = "b", weight = 3 }', '{ id = "b", weight = 0 }', "task[mt].datasets[1].weight: weight must be"),
        ('level = "H"', 'level = "X"', "ability[main].sub_ability[ms].task[mt].level: level 'X' is not one of L, M, H"),
        ('level = "H"', 'level = "h"', "level 'h' is not one of L, M, H"),
        ('id = "mt"', 'id = "gs"', "task[0]: id 'gs' already used at ability[g].sub_ability[0]"),
        ('id = "ms"', 'id = "main"', "id 'main' already used at ability[1]"),
        ('gate = "g"', 'gate = "nope"', "[scoring].gate: gate 'nope' is not an ability"),
        ("tau = 50", "", "[scoring]: a gate needs a threshold tau"),
        ('id = "g"\n', 'id = "g"\nweight = 1\n', "ability[g].weight: the gate ability never enters the total"),
        ('normalization = "ratio", weight = 2', 'normalization = "percent"', "[datasets].b.methods[0]: normalization"),
        ("min = 1, max = 5", "min = 1", "numeric normalization needs min and max"),
        ("min = 1, max = 5", "min = 5, max = 5", "max (5.0) must be greater than min (5.0)"),
        ("grades = { good = 90, bad = 10 }", "grades = {}", "grade normalization needs a grades table"),
        ("grades = { good = 90, bad = 10 }", "grades = { good = 190 }", "points must be within 0-100"),
        ('metric = "grade"', 'metric = "acc"', "metric 'acc' listed twice"),
        ('a = "Dataset A"', 'a = "Dataset A"\nc = "unused"', "[datasets].c: declared but used by no task"),
        ('[suite]', '[suite]\ncolour = "red"', "[suite]: unknown key 'colour'"),
        ('level = "L"', 'level = "L"\nlevle = "M"', "unknown key 'levle'"),
    ],
)
def test_validation_errors_name_file_and_path(tmp_path, old, new, message):
    assert old in GOOD
    p = _write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(SuiteError) as e:
        load_suite(str(p))
    assert str(p) in str(e.value) and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_difficulty_table_override_and_errors(tmp_path):
    ok = GOOD.replace("tau = 50", 'tau = 50\n[scoring.difficulty]\nLM = { L = 0.5, M = 0.5 }')
    s = load_suite(str(_write(tmp_path, ok)))
    rows = {(d.levels, d.level): d.weight for d in s.difficulty}
    assert rows[("LM", "L")] == 0.5 and rows[("LMH", "L")] == 0.3  # others keep the paper's table
    for bad, msg in [
        ("LM = { L = 0.5, M = 0.6 }", "[scoring.difficulty].LM: weights must sum to 1"),
        ("LM = { L = 1.0 }", "[scoring.difficulty].LM: needs a weight for each of L, M"),
        ("LM = { L = 0.5, H = 0.5 }", "[scoring.difficulty].LM: unknown key 'H'"),
        ("ML = { L = 0.5, M = 0.5 }", "[scoring.difficulty]: unknown key 'ML'"),
        ("LM = { L = 0, M = 1 }", "[scoring.difficulty].LM.L: weight must be a number > 0"),
    ]:
        p = _write(tmp_path, GOOD.replace("tau = 50", f"tau = 50\n[scoring.difficulty]\n{bad}"))
        with pytest.raises(SuiteError, match=None) as e:
            load_suite(str(p))
        assert msg in str(e.value), str(e.value)


def test_toml_syntax_error_names_the_line(tmp_path):
    p = _write(tmp_path, GOOD.replace('level = "H"', "level = H"))
    with pytest.raises(SuiteError) as e:
        load_suite(str(p))
    assert str(p) in str(e.value) and "line" in str(e.value)


def test_toml_duplicate_dataset_declaration_is_a_syntax_error(tmp_path):
    p = _write(tmp_path, GOOD.replace('a = "Dataset A"', 'a = "Dataset A"\na = "again"'))
    with pytest.raises(SuiteError, match="tiny.toml"):
        load_suite(str(p))


def test_unknown_suite_and_missing_file(tmp_path):
    with pytest.raises(SuiteError, match="unknown suite 'nope' \\(known: .*moodbench"):
        load_suite("nope")
    with pytest.raises(SuiteError, match="does not exist"):
        load_suite(str(tmp_path / "absent.toml"))


def test_gate_and_tau_rules(tmp_path):
    no_gate = GOOD.replace('gate = "g"\ntau = 50\n', "")
    s = load_suite(str(_write(tmp_path, no_gate)))
    assert s.gate is None and [a.weight for a in s.abilities] == [1.0, 2.0]  # unweighted -> 1
    p = _write(tmp_path, GOOD.replace('gate = "g"\n', ""))
    with pytest.raises(SuiteError, match="tau without a gate"):
        load_suite(str(p))
    p = _write(tmp_path, GOOD.replace('missing_levels', 'x').replace("tau = 50", 'tau = 50\nmissing_levels = "drop"'))
    with pytest.raises(SuiteError, match="missing_levels: 'drop' is not one of table, renormalize"):
        load_suite(str(p))


def test_a_dataset_may_set_its_turns_per_session():
    from benchmark.suites.suite import SuiteError, parse_suite

    def doc(turns):
        return {"suite": {"name": "s1"}, "ability": [{"id": "a", "sub_ability": [{"id": "s", "task": [
            {"id": "t", "level": "M", "datasets": ["d"]}]}]}], "datasets": {"d": {"name": "D", "turns": turns}}}

    assert parse_suite(doc(3)).spec("d").turns == 3
    for bad in (0, -1, 2.5, True, "8"):
        with pytest.raises(SuiteError, match=r"\[datasets\]\.d\.turns: expected an integer >= 1"):
            parse_suite(doc(bad))
