"""The suite hierarchy in SQL: the suite's tables, the views from item rows up to the leaderboard
(views.sql, with the veto), baselines, unread answers, and the bootstrap intervals.

Entry: ``store.hierarchy.views.ensure_views``. Imports of store: the top's primitives, ``results``,
``estimates``, ``side`` (the judge's and extractor's tables the views read) and ``stats``.
"""
