"""LogicNLI (Tian et al., EMNLP 2021), test: does a statement follow from facts and rules in first-order logic?

In the reference suite only, where it replaces the paper's LogiQA (the engine's
``logiqa`` adapter serves the paper's suite). Files: the reference's
``moodbench/basic_ability/NLI/LogicNLI_json/test_language.json``, one JSON
object: problem id -> ``facts``, ``rules``, 20 ``statements`` and their
``labels``; 100 problems, 2,000 statements, 500 per label. No upstream copy is
in the team folder.

One item per statement, id ``<problem id>/<statement index>``. The prompt
numbers the problem's facts and rules, gives the statement and the four
relations in LogicNLI's order (entailment, contradiction, neutral,
self-contradiction = both the statement and its negation follow); the task
sentence says what each means. The options keep that order (it is balanced).
The reference names the four labels bare and asks the model to reason step by
step yet answer with one letter; here only the answer format is asked for.
Metric: accuracy (the reference's). Labels are balanced: chance and any fixed
answer score 0.25.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from benchmark.loaders import Files, locate
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

GOLD = {"entailment": 0, "contradiction": 1, "neutral": 2, "self_contradiction": 3}


def _numbered(lines: list) -> str:
    return "\n".join(f"{n}. {' '.join(str(s).split())}" for n, s in enumerate(lines, 1))


class LogicNLIDataset(ChoiceDataset, frozen=True, kw_only=True):
    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        _, _, paths = locate(self.files, Path(data_dir), self.id)
        for path in paths:
            try:
                problems = orjson.loads(path.read_bytes())
                parsed = [(str(k), p["facts"], p["rules"], p["statements"], p["labels"]) for k, p in problems.items()]
            except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}: not a LogicNLI file ({e!r})") from None
            for key, facts, rules, statements, labels in parsed:
                if len(statements) != len(labels):
                    raise ValueError(f"{path} problem {key}: {len(statements)} statements, {len(labels)} labels")
                shared = {"facts": _numbered(facts), "rules": _numbered(rules)}
                for k, (statement, label) in enumerate(zip(statements, labels)):
                    yield f"{key}/{k}", {**shared, "statement": " ".join(str(statement).split()), "label": label}


register(
    LogicNLIDataset(
        id="logicnli",
        language="en",
        files=(Files("reference", "basic_ability/NLI/LogicNLI_json/test_language.json", "json"),),
        item_id="",  # built in records()
        task="Below are facts and rules about some people. Using only these facts and rules, decide how the "
        "statement relates to them: entailment (the statement follows from them), contradiction (its negation "
        "follows), neutral (neither follows) or self-contradiction (both the statement and its negation follow).",
        body="Facts:\n{facts}\n\nRules:\n{rules}\n\nStatement: {statement}",
        labels=("Entailment", "Contradiction", "Neutral", "Self-contradiction"),
        gold_field="label",
        gold_map=GOLD,
        chance_baseline=0.25,
        majority_baseline=0.25,  # 500 statements per label
    )
)
