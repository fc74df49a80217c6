"""The skeleton every run shares: its context, event-loop settings, workers, signals, progress, generation
settings, endpoints and limits, and the local servers it starts (`local_server`).

Entry point: `engine.run.context.execute` (a body run with a `RunContext` on the run loop).
May import: `engine.config`, `engine.errors`, `engine.version` (and providers, store, benchmark).
"""
