"""Reading results: the leaderboard, its tables and tree, compare, export, serve, the end-of-run summary and
the HTML page (`engine/report/html/`, its assets beside it). Read-only: nothing here writes results.

Entry point: `engine.report.leaderboard.report` (`python -m engine report DB`).
May import: `engine.run`, `engine.errors`, `engine.version`.
Flags of `report`, `serve`, `export`, `compare`: `flags.py`, part of the command line (only engine/cli.py imports it).
"""
