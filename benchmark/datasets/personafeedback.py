"""PersonaFeedback: which of two answers fits the asking user's persona better?

Files: the Hub dataset ``PersonalAILab/PersonaFeedback`` downloaded into
``<data_dir>/personafeedback/`` (``data/<tier>/*.jsonl`` with ``user_id``,
``question``, ``chosen``, ``reject``; ``persona/<user_id>.json`` profiles),
else the reference's submodule path
``moodbench/company_ability/personality/PersonaFeedback/`` (empty in the
public repository). Neither is in the team folder: the tests read a fixture in
the same format (tests/benchmark/fixtures/personafeedback/). Every
``data/*/*.jsonl`` is read (general and specific tiers; the Hub spells the
second folder ``spedific``, which the reference's ``specific/`` glob misses).
Item id: ``<general|specific>/<file stem>/<row>``. A row whose persona file is
missing is skipped, as in the reference.

The profile (demographics, MBTI letters, values and interests, every
preference field) is shown as lines; the two answers are options A/B in a
seeded order per item (the reference uses one seeded random draw); gold =
``chosen``. Accuracy (primary, chance 0.5) and the share of answers choosing
the first-shown option. The paper's "model-based" judge method comes later;
this is the reference's plain two-option method.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import orjson

from benchmark.dataset import DataMissing, MetricSpec
from benchmark.loaders import Files, locate, read_rows
from benchmark.mcq import ChoiceDataset
from benchmark.registry import register

_MBTI = ("Extraversion_or_Introversion", "Sensing_or_Intuition", "Thinking_or_Feeling", "Judging_or_Perceiving")


def _label(key: str) -> str:
    return key.replace("_", " ").strip().capitalize()


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{_label(k)}: {_text(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple)):
        return "; ".join(_text(v) for v in value)
    return " ".join(str(value).split())


def profile(persona: dict) -> str:
    """A persona as "Label: value" lines (known fields first, then every preference)."""
    demo = persona.get("Demographics") or {}
    pers = persona.get("Personality") or {}
    fields = [
        ("Name", persona.get("Name") or demo.get("Name")),
        ("Age", demo.get("Age")),
        ("Gender", demo.get("Gender")),
        ("Nationality", demo.get("Nationality")),
        ("Languages", demo.get("Language")),
        ("Occupation", demo.get("Career_Information")),
        ("MBTI type", "".join(str(pers.get(k) or "") for k in _MBTI)),
        ("Values and interests", pers.get("Values_and_Interests")),
    ]
    fields += [(_label(k), v) for k, v in (persona.get("Preference") or {}).items()]
    lines = [f"{label}: {_text(v)}" for label, v in fields if v not in (None, "", [], {})]
    return "\n".join(lines) if lines else _text(persona)


def _tier(folder: str) -> str:
    return "specific" if folder == "spedific" else folder


def _measures(meta: dict, choice: int | None, correct: bool) -> dict[str, float]:
    answered = choice is not None
    return {"answered": float(answered), "first": float(answered and meta["perm"][0] == choice)}


class PersonaFeedbackDataset(ChoiceDataset, frozen=True, kw_only=True):
    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        where, _, paths = locate(self.files, Path(data_dir), self.id)
        personas: dict[Path, dict[str, dict]] = {}
        for path in paths:
            folder = path.parents[2] / "persona"  # <root>/data/<tier>/<file>.jsonl -> <root>/persona
            if folder not in personas:
                if not folder.is_dir():
                    raise DataMissing(f"{self.id}: persona folder {folder} is missing")
                personas[folder] = {p.stem: orjson.loads(p.read_bytes()) for p in sorted(folder.glob("*.json"))}
            for n, row in read_rows(where, path):
                persona = personas[folder].get(str(row.get("user_id")))
                if persona is None:
                    continue
                for field in ("question", "chosen", "reject"):
                    if not str(row.get(field) or "").strip():
                        raise ValueError(f"{path} row {n}: empty {field!r}")
                row["_profile"], row["_gold"] = profile(persona), 0
                yield f"{_tier(path.parent.name)}/{path.stem}/{n}", row


register(
    PersonaFeedbackDataset(
        id="personafeedback",
        language="en",
        files=(
            Files("original", "data/*/*.jsonl", "jsonl"),
            Files("reference", "company_ability/personality/PersonaFeedback/data/*/*.jsonl", "jsonl"),
        ),
        item_id="",  # built in records()
        task=(
            "Below is the profile of a user and a question they asked an AI assistant, followed by two "
            "candidate answers. Put yourself in this user's place: which answer would they prefer?"
        ),
        body="User profile:\n{_profile}\n\nQuestion: {question}",
        option_fields=("chosen", "reject"),
        gold_field="_gold",
        shuffle=True,
        measures=_measures,
        metrics=(
            MetricSpec("accuracy", "mean", "score", primary=True),
            MetricSpec("first_position_rate", "ratio", "first", "answered"),
        ),
        chance_baseline=0.5,
        majority_baseline=0.5,  # the chosen answer is first in about half the items (seeded order)
    )
)
