"""CompactBench on the engine: how well a context-compaction method keeps what matters.

Reproduces CompactBench 0.1.0 (https://github.com/compactbench/compactbench,
Apache-2.0; its generator, prompts, scorer and leaderboard rules) in `compat`
mode, and its methodology page in `strict` mode. docs/compactbench.md says how.

Modules, in the order data flows: templates (YAML DSL) -> generate (seeds,
draws) -> cases -> plan (the run's cases) -> compactors / plugins -> artifact
-> runner (drift cycles, rows) -> scoring (items); aggregation is SQL in
store/side/compactbench.sql.
"""
