"""User-facing errors: one line that names what to fix, never a traceback."""


class UserError(Exception):
    """Bad input (config, data, database, flags). The CLI prints it and exits 2."""
