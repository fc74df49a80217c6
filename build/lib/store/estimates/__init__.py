"""Scores from part of the items: per-item results made elsewhere (import-items) and the estimates of
the dataset scores of models that answered a fraction (estimates.sql).

Entry: ``store.estimates.scores.compute_estimates``. Imports of store: the top's primitives,
``results`` and ``stats``.
"""
