"""Metrics: ``item`` (per-item scores adapters share), ``text`` (overlap metrics for free text), ``kinds``
(the aggregation kinds: each one's SQL for the views beside its Python reference).

Entry: ``kinds.KINDS``. Imports nothing else of the project.
"""
