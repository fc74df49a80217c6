"""Per-item measures of a choice dataset beyond accuracy: the F1 of one class, macro F1 over classes.

A `measures` hook (``ChoiceDataset.measures``) maps an item's meta, the chosen option index and
whether it was right to named values that the dataset's metrics aggregate.
"""

from __future__ import annotations

from typing import Callable

from benchmark.dataset import MetricSpec

MeasuresHook = Callable[[dict, "int | None", bool], dict[str, float]]


def label_key(label: str) -> str:
    """A measures/metric key fragment for a label: lower-case, [a-z0-9_] only."""
    return "".join(c if c.isalnum() and c.isascii() else "_" for c in label.lower()).strip("_")


def class_f1_measures(positive: int) -> MeasuresHook:
    """A `measures` hook for the F1 of one class (binary tasks scored by F1 of the positive class).

    ``positive`` is the class's original option index. Each item records tp/fp/fn of that
    class; declare ``MetricSpec("f1_<class>", "label_f1", "tp", "fp", "fn")``. An unparsed
    answer is a miss (fn) when the gold is the class, nothing otherwise.
    """

    def measures(meta: dict, choice: int | None, correct: bool) -> dict[str, float]:
        perm = meta.get("perm")
        gold = perm[meta["g"]] if perm else meta["g"]
        said, truth = choice == positive, gold == positive
        return {"tp": float(said and truth), "fp": float(said and not truth), "fn": float(truth and not said)}

    return measures


def per_class_f1(labels: tuple[str, ...]) -> tuple[MeasuresHook, tuple[MetricSpec, ...]]:
    """Macro F1 over the classes of a single-answer classification: a `measures` hook and its metrics.

    Each item records tp/fp/fn of its gold class and, when it names another class, of that
    one (keys ``tp_<class>`` ...; ``<class>`` from `label_key`). Metrics: ``macro_f1`` (the
    mean of the classes' F1 that occur in gold or answers, store/hierarchy/views.sql) and ``f1_<class>``.
    An unparsed answer is a miss of the gold class. Works with shuffled options.
    """
    keys = tuple(label_key(x) or f"label{i}" for i, x in enumerate(labels))
    if len(set(keys)) != len(keys):
        raise ValueError(f"labels collide after key folding: {keys}")

    def measures(meta: dict, choice: int | None, correct: bool) -> dict[str, float]:
        perm = meta.get("perm")
        k = keys[perm[meta["g"]] if perm else meta["g"]]
        m = {f"tp_{k}": float(correct), f"fp_{k}": 0.0, f"fn_{k}": float(not correct)}
        if choice is not None and not correct:
            m.update({f"tp_{keys[choice]}": 0.0, f"fp_{keys[choice]}": 1.0, f"fn_{keys[choice]}": 0.0})
        return m

    specs = (MetricSpec("macro_f1", "macro_f1", "score"),) + tuple(
        MetricSpec(f"f1_{k}", "label_f1", f"tp_{k}", f"fp_{k}", f"fn_{k}") for k in keys
    )
    return measures, specs
