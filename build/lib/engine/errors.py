"""The command line's exit statuses, one table for every command (engine/cli.py says when each is used).

Bad input is `benchmark.errors.UserError` (importable by every package): the one import path for it.
"""

# Exit statuses of the command line (engine/cli.py says when each is used).
EXIT_FAILED = 1  # done, but something failed (a file not fetched, a relation not exported)
EXIT_USAGE = 2  # bad input: a UserError or a usage error
EXIT_UNREACHABLE = 3  # a host could not be reached: its remaining work was not done
EXIT_INTERRUPTED = 130  # Ctrl-C or SIGTERM
