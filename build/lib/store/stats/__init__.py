"""Pure statistics, on numpy and scipy: seeded bootstrap draws, the item model (2PL), the
model-assisted estimator, the stopping rule, and the paired two-sample tests of `compare`.

No DuckDB and nothing else of the project: each module is testable and reusable alone. Entry: each
module's functions (``draws.resample_counts``, ``estimator.estimate_model``, ``stopping``,
``paired.mcnemar_exact``).
"""
