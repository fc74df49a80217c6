"""store/: the results database (DuckDB), in wings by job (docs/architecture.md, "store/ and benchmark/").

On top, what every wing shares: ``db`` (opening a file with every wing's tables and views: the entry),
``snapshot`` (a read-only copy beside a running sweep), ``import_scores`` (dataset scores made
elsewhere, into a file it opens), and the primitives ``transaction``, ``query``, ``upsert``.

- ``results/``: the rows a sweep writes and what resume reads (entry: ``results.writer.Writer``)
- ``hierarchy/``: the suite's tables, the SQL views up to the leaderboard, bootstrap intervals
  (entry: ``hierarchy.views.ensure_views``)
- ``estimates/``: dataset scores estimated from part of the items; per-item results made elsewhere
  (entry: ``estimates.scores.compute_estimates``)
- ``side/``: the tables of other lanes and commands: judgements, extractions, provider batches, the
  cluster's units, CompactBench (entry: each module's ``ensure_*_tables``)
- ``stats/``: pure statistics on numpy/scipy, importing nothing of the project (entry: each module)
"""
