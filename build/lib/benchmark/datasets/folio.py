"""FOLIO (first-order-logic reasoning in natural language, v0.0), validation: True, False or Uncertain.

Files: the original ``<data_dir>/folio/folio-validation.jsonl`` (Yale-LILY/FOLIO
v0.0, all 204 items) when present, else the reference's identical copy
``moodbench/basic_ability/NLI/FOLIO_jsonltxt/folio-validation.jsonl``. The rows
have no id field; item id: the row number, the same in both.

Prompt: the natural-language premises, numbered, and the conclusion (the
standard NL setting of the FOLIO paper). The first-order-logic translations are
not shown: some v0.0 translations are wrong, and the task is reasoning in
natural language.

Metrics. The paper lists "Recall@K, MRR", which are ranking metrics: with one
answer per item, Recall@1 is accuracy and MRR degenerates to it (reciprocal rank
1 or 0), and K > 1 would need a ranking of the three labels. So: accuracy
(primary), plus macro F1 over the three classes (72/63/69), which a model
leaning to one label (e.g. always "Uncertain") cannot inflate.
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import per_class_f1
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

LABELS = ("True", "False", "Uncertain")
_measures, _f1_metrics = per_class_f1(LABELS)


def _derive(row: dict) -> dict:
    return {"_premises": "\n".join(f"{i}. {' '.join(p.split())}" for i, p in enumerate(row["premises"], 1))}


register(
    ChoiceDataset(
        id="folio",
        language="en",
        files=(
            Files("original", "folio-validation.jsonl", "jsonl"),
            Files("reference", "basic_ability/NLI/FOLIO_jsonltxt/folio-validation.jsonl", "jsonl"),
        ),
        item_id="{_row}",
        task=(
            "Assume the premises below are all true. Using only them, decide whether the conclusion is "
            "True (it follows), False (its negation follows) or Uncertain (neither follows)."
        ),
        body="Premises:\n{_premises}\n\nConclusion: {conclusion}",
        derive=_derive,
        labels=LABELS,
        gold_field="label",
        gold_map={x: i for i, x in enumerate(LABELS)},
        measures=_measures,
        metric_specs=(MetricSpec("accuracy", "mean", "score", primary=True),) + _f1_metrics,
        chance_baseline=1 / 3,
        majority_baseline=72 / 204,  # always "True" (macro F1 of that: 0.17)
    )
)
