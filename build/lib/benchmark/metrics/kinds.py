"""The aggregation kinds a metric may declare: each one's SQL and its Python reference, together.

A dataset's ``MetricSpec(name, kind, a, b, c)`` says how per-item values (the
``score`` column or keys of ``measures``, named by a/b/c) aggregate into one
metric value. The SQL expression is the kind's branch of the CASE in
``metric_values`` (store/hierarchy/views.sql renders it from ``KINDS``); the Python
function computes the same value from the column aggregates (``Sums``) and is
the oracle the SQL is tested against (tests/benchmark/test_metric_kinds.py). The
bootstrap (store/hierarchy/bootstrap.py) applies the Python function to resampled sums.

SQL NULL semantics are kept: a sum over no non-NULL value is NULL (NaN here),
and NaN propagates as NULL does. The functions accept floats or numpy arrays
of any shape (elementwise), so one call evaluates every bootstrap replicate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported by the functions that compute: a sweep that keeps its bounds never needs it
    import numpy as np


class Sums(NamedTuple):
    """Aggregates of the a/b/c columns over the rows of one (model, dataset, metric).

    sum_x is the sum of the non-NULL values of column x, n_x their count; a
    column the spec leaves unset has n_x = 0.
    """

    sum_a: np.ndarray
    n_a: np.ndarray
    sum_b: np.ndarray
    n_b: np.ndarray
    sum_c: np.ndarray
    n_c: np.ndarray


def _sql_sum(s, n):
    """SQL sum(): NULL (NaN) when no value was summed."""
    import numpy as np

    return np.where(np.asarray(n) > 0, s, np.nan)


def _div(x, y):
    """x / nullif(y, 0) with NULL propagation."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y == 0, np.nan, x / np.where(y == 0, 1.0, y))


def _f1(tp, fp, fn):
    return _div(2 * tp, 2 * tp + fp + fn)


def _mean(s: Sums):
    return _div(_sql_sum(s.sum_a, s.n_a), s.n_a)


def _ratio(s: Sums):
    return _div(_sql_sum(s.sum_a, s.n_a), _sql_sum(s.sum_b, s.n_b))


def _micro_f1(s: Sums):
    return _f1(_sql_sum(s.sum_a, s.n_a), _sql_sum(s.sum_b, s.n_b), _sql_sum(s.sum_c, s.n_c))


def _bias_score(s: Sums):
    import numpy as np

    mean_c = np.nan_to_num(_div(_sql_sum(s.sum_c, s.n_c), s.n_c), nan=0.0)  # coalesce(avg(c), 0)
    return (1 - mean_c) * (2 * _div(_sql_sum(s.sum_a, s.n_a), _sql_sum(s.sum_b, s.n_b)) - 1)


def _balance(s: Sums):
    import numpy as np

    return 1 - 2 * np.abs(_div(_sql_sum(s.sum_a, s.n_a), _sql_sum(s.sum_b, s.n_b)) - 0.5)


def _icat(s: Sums):
    import numpy as np

    # DuckDB's least() skips NULL arguments, as np.fmin does
    return _div(2 * np.fmin(_sql_sum(s.sum_a, s.n_a), _sql_sum(s.sum_b, s.n_b)), _sql_sum(s.sum_c, s.n_c))


def macro_of(label_f1: np.ndarray, axis: int = 0):
    """macro_f1 from its dataset's label_f1 values (stacked on ``axis``): their mean, NULLs left out."""
    import numpy as np

    v = np.asarray(label_f1, dtype=float)
    n = np.sum(~np.isnan(v), axis=axis)
    return _div(np.nansum(v, axis=axis), n)


class MetricKind(NamedTuple):
    name: str
    columns: str  # the columns the spec must name: "a", "ab" or "abc" (bias_score: c optional)
    sql: str  # the aggregate over metric_inputs' rows of one (model, dataset, metric)
    python: Callable[[Sums], np.ndarray] | None  # None: computed from sibling metrics (macro_f1)
    doc: str


_F1_SQL = "2 * sum(a) / nullif(2 * sum(a) + sum(b) + sum(c), 0)"

KINDS: dict[str, MetricKind] = {k.name: k for k in (
    MetricKind("mean", "a", "avg(a)", _mean, "mean of a (accuracy, token F1, ROUGE ...)"),
    MetricKind("ratio", "ab", "sum(a) / nullif(sum(b), 0)", _ratio, "sum(a) / sum(b)"),
    MetricKind("micro_f1", "abc", _F1_SQL, _micro_f1, "F1 of pooled counts a, b, c = tp, fp, fn"),
    MetricKind("bias_score", "ab", "(1 - coalesce(avg(c), 0)) * (2 * sum(a) / nullif(sum(b), 0) - 1)",
               _bias_score, "BBQ bias: 2*biased/answered - 1, times (1 - mean(c)) when c is set (s_AMB)"),
    MetricKind("balance", "ab", "1 - 2 * abs(sum(a) / nullif(sum(b), 0) - 0.5)", _balance,
               "preference balance: 1 at sum(a)/sum(b) = 50 %, 0 at 0 % or 100 % (CrowS-Pairs)"),
    MetricKind("label_f1", "abc", _F1_SQL, _micro_f1, "one label's F1 from its tp/fp/fn (NULL: never occurs)"),
    MetricKind("macro_f1", "a",
               "avg(CASE WHEN any_value(kind) = 'label_f1' THEN " + _F1_SQL + " END) "
               "OVER (PARTITION BY model, dataset)",
               None, "unweighted mean of the dataset's label_f1 metrics (a is not read)"),
    MetricKind("icat", "abc", "2 * least(sum(a), sum(b)) / nullif(sum(c), 0)", _icat,
               "StereoSet ICAT = 2 * min(stereo, anti) / answered"),
    # Per scenario first: an item's samples are plays of one scenario (an episode dataset's `samples = k`);
    # metric_inputs averages a, b and c over an item's ok plays, then these aggregate the items as
    # mean / ratio do, and the bootstrap resamples scenarios and, within each, its plays.
    MetricKind("play_mean", "a", "avg(a)", _mean, "mean over scenarios of a averaged over each one's plays"),
    MetricKind("play_ratio", "ab", "sum(a) / nullif(sum(b), 0)", _ratio,
               "sum(a) / sum(b), a and b averaged over each scenario's plays"),
)}

# Kinds whose rows are first averaged over an item's samples (its plays): the views and the bootstrap read it.
PLAY_KINDS = ("play_mean", "play_ratio")


def check_spec(name: str, kind: str, a: str | None, b: str | None, c: str | None) -> None:
    """Raise ValueError when a metric declaration names an unknown kind or leaves a needed column unset."""
    k = KINDS.get(kind)
    if k is None:
        raise ValueError(f"metric {name!r}: unknown kind {kind!r} (known: {', '.join(KINDS)})")
    given = {"a": a, "b": b, "c": c}
    missing = [col for col in k.columns if not given[col]]
    if missing:
        raise ValueError(f"metric {name!r}: kind {kind!r} needs column(s) {', '.join(missing)}")


def play_kinds_sql() -> str:
    """PLAY_KINDS as an SQL list, for `kind IN (...)`."""
    return ", ".join(f"'{k}'" for k in PLAY_KINDS)


def sql_case() -> str:
    """The CASE of metric_values' aggregating branch, one WHEN per kind."""
    whens = "\n".join(f"           WHEN '{k.name}' THEN {k.sql}" for k in KINDS.values())
    return f"CASE any_value(kind)\n{whens}\n       END"
