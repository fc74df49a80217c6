"""Getting the datasets: `data pull` and `data list`, over the download machinery of `fetch`.

Entry point: `engine.data.pull.pull`.
May import: `engine.run` (the shared worker pool), `engine.errors` (and benchmark).
Flags of `data pull`, `data list`: `flags.py`, part of the command line (only engine/cli.py imports it).
"""
