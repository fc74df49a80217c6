"""The sweep and the commands around its stored answers: planning, the sweep, identity, the cost forecast
(`sweep --estimate`), rescore, extract, batches, import-items and estimate (scores from a fraction of the
items), and the rounds of `sweep --until-stable`.

Entry point: `engine.sweep.sweep.sweep` (`python -m engine sweep MODELS.toml`).
May import: `engine.run`, `engine.lanes`, `engine.data`, `engine.report`, `engine.config`, `engine.errors`,
`engine.version`.
Flags of `sweep` and the commands around it: `flags.py`, part of the command line (only engine/cli.py imports it).
"""
