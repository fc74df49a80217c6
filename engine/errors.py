"""User-facing errors: one line that names what to fix, never a traceback.

`UserError` is defined in benchmark/errors.py (importable by every package); it is re-exported
here because the engine raises it most.
"""

from benchmark.errors import UserError

__all__ = ["UserError"]

# Exit statuses of the command line (engine/cli.py says when each is used).
EXIT_FAILED = 1  # done, but something failed (a file not fetched, a relation not exported)
EXIT_USAGE = 2  # bad input: a UserError or a usage error
EXIT_UNREACHABLE = 3  # a host could not be reached: its remaining work was not done
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM
