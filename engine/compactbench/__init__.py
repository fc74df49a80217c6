"""CompactBench runs: generate cases, run target models x compactors through drift cycles, print scores.

Entry point: `engine.compactbench.command.run`.
May import: `engine.run`, `engine.config`, `engine.errors`, `engine.version`.
"""
