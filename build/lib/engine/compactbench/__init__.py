"""CompactBench runs: generate cases, run target models x compactors through drift cycles, print scores.

Entry point: `engine.compactbench.command.run`.
May import: `engine.run`, `engine.config`, `engine.errors`, `engine.version`.
Flags of `compactbench generate|run|scores`: `flags.py`, part of the command line (only engine/cli.py imports it).
"""
