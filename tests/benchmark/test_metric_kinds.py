"""The registry of aggregation kinds: each kind's SQL (in metric_values) equals its Python reference."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from benchmark.dataset import MetricSpec, Scored
from benchmark.metrics.kinds import KINDS, Sums, macro_of
from tests.store.helpers import sql_metric_values


def _rows(rng: random.Random, n: int, keys: str) -> list[dict]:
    """Random per-item measures; each key missing (NULL) now and then, counts 0..3."""
    out = []
    for _ in range(n):
        out.append({k: rng.randint(0, 3) if rng.random() < 0.3 else rng.random()
                    for k in keys if rng.random() > 0.15})
    return out


def _sums(rows: list[dict], cols: tuple[str | None, ...]) -> Sums:
    parts = []
    for col in cols:
        vals = [r[col] for r in rows if col is not None and col in r]
        parts += [np.float64(sum(vals)), np.float64(len(vals))]
    return Sums(*parts)


def _same(sql, py) -> bool:
    py = float(py)
    return (sql is None and math.isnan(py)) or (sql is not None and sql == pytest.approx(py, abs=1e-12))


@pytest.mark.parametrize("seed", range(6))
def test_every_kind_sql_equals_python(seed):
    rng = random.Random(seed)
    n = rng.choice([1, 3, 40])
    specs = [MetricSpec(f"m_{k.name}", k.name, "x", "y", "z") for k in KINDS.values() if k.name != "macro_f1"]
    specs += [MetricSpec("bias2", "bias_score", "x", "y"),  # c unset: no (1 - mean(c)) factor
              MetricSpec("lf_u", "label_f1", "u", "v", "w"), MetricSpec("lf_x", "label_f1", "x", "y", "z"),
              MetricSpec("macro", "macro_f1", "score")]
    rows = _rows(rng, n, "xyzuvw")
    got = sql_metric_values("d", specs, [(None, Scored("A", 1.0, r)) for r in rows])
    for s in specs:
        if s.kind == "macro_f1":
            continue
        want = KINDS[s.kind].python(_sums(rows, (s.a, s.b, s.c)))
        assert _same(got[s.name], want), (s, got[s.name], want)
    labels = [KINDS["label_f1"].python(_sums(rows, cols)) for cols in (("u", "v", "w"), ("x", "y", "z"))]
    label_f1_rows = [got[s.name] for s in specs if s.kind == "label_f1"]
    assert _same(got["macro"], macro_of(np.array([np.nan if v is None else v for v in label_f1_rows])))
    assert len(labels) == 2


def test_all_null_columns_give_null_like_sql():
    empty = Sums(*(np.float64(0),) * 6)
    for k in KINDS.values():
        if k.python is not None:
            assert math.isnan(float(k.python(empty))), k.name
    assert math.isnan(float(macro_of(np.array([np.nan, np.nan]))))


def test_python_kinds_are_elementwise_over_replicates():
    sums = Sums(np.array([1.0, 2.0]), np.array([2.0, 2.0]), np.array([4.0, 0.0]), np.array([2.0, 0.0]),
                np.array([0.0, 1.0]), np.array([1.0, 1.0]))
    assert KINDS["mean"].python(sums) == pytest.approx([0.5, 1.0])
    r = KINDS["ratio"].python(sums)
    assert r[0] == 0.25 and math.isnan(r[1])


def test_unknown_kind_is_rejected_at_declaration():
    with pytest.raises(ValueError, match="unknown kind 'ratoi'"):
        MetricSpec("x", "ratoi", "a", "b")


def test_missing_column_is_rejected_at_declaration():
    with pytest.raises(ValueError, match="needs column"):
        MetricSpec("x", "micro_f1", "tp", "fp")
    with pytest.raises(ValueError, match="needs column"):
        MetricSpec("x", "ratio")
