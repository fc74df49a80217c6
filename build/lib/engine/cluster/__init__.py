"""The same sweep on a Ray cluster (`sweep --cluster ADDRESS`).

Entry point: ``engine.cluster.driver.sweep_on_cluster``. Only the command line imports this wing, and
only when `--cluster` is given: without it Ray is never imported.

- ``connect``: Ray, imported on demand (exit 2 with the install line when absent), and the connection.
- ``limiter``: one rate keeper actor per account (and per model with its own limits) holding
  providers/limits.py's GCRA limiter; hosts book every request through it. ``rate_keeper``: the
  keeper's body, in a module that imports nothing of the engine (its worker starts fast).
- ``units``: the unit of work, one (model, dataset), and the landing of its rows as Parquet files.
- ``host``: the host actor of one model replica: starts the model's server on its node when the engine
  serves it, and runs units with the existing lane code (engine/lanes/model_lane.py).
- ``placement``: the hosts of every model as the driver keeps them: placed, started, replaced, given up.
- ``driver``: plans as the single-machine sweep plans, hands units to hosts, ingests landed files
  (the only DuckDB writer), re-queues what a lost node or server was running.
"""
