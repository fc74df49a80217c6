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

The task as its authors define it (paper: arXiv:2506.12915): the model under
test reads the persona and the question and says which of two answers fits the
persona better; gold = ``chosen``. That is the paper's "model-based" method:
the model under test is the pairwise judge, no external judge is involved.
The profile (demographics, MBTI letters, values and interests, every
preference field) is shown as lines; the two answers are options A/B in a
seeded order per item (the reference uses one seeded random draw).

Position-bias check: a seeded share of the items (``swap_share``, by a hash
of the item id, so a smaller --limit keeps a prefix of the same pairs) is
asked a second time, as ``sample`` 1, with the two answers in the other
order. ``accuracy`` (primary, chance 0.5) counts the first order only
(measure ``orig``), as the authors score one order per item;
``first_position_rate`` is the share of answers picking the first-shown
option over every answer; the view ``position_consistency`` pairs the two
orders and reports how often the model picks the same answer in both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import orjson

from benchmark.dataset import DataMissing, Item, MetricSpec, stable_hash
from benchmark.loaders import Files, locate, read_rows
from benchmark.adapters.mcq import ChoiceDataset
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
    out = {"answered": float(answered), "first": float(answered and meta["perm"][0] == choice)}
    if meta.get("swapped"):
        out["swap"] = 1.0  # the second, reversed order of a position-bias pair
    else:
        out["orig"] = float(correct)
    return out


class PersonaFeedbackDataset(ChoiceDataset, frozen=True, kw_only=True):
    swap_share: float = 0.25  # items also asked in the reversed order (position-bias check)

    def samples_of(self, item_id: str) -> int:
        """2 for the items of the position-bias check (seeded by the item id), else 1."""
        draw = int(stable_hash(self.id, item_id, "swap", length=16), 16) / 16**16
        return 2 if draw < self.swap_share else 1

    def render_sample(self, item_id: str, raw: Any, sample: int) -> Item:
        """Sample 1 shows the two answers in the other order: texts exchanged over the same permutation."""
        if sample == 0:
            return self.render(item_id, raw)
        return self.render(item_id, {**raw, "chosen": raw["reject"], "reject": raw["chosen"], "_gold": 1,
                                     "_swapped": True})

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
        meta_fields=lambda row: {"swapped": True} if row.get("_swapped") else {},
        metric_specs=(
            MetricSpec("accuracy", "mean", "orig", primary=True),
            MetricSpec("first_position_rate", "ratio", "first", "answered"),
        ),
        revision=2,
        chance_baseline=0.5,
        majority_baseline=0.5,  # the chosen answer is first in about half the items (seeded order)
    )
)
