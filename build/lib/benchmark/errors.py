"""The one root of every user error: bad input (a flag, a file, a key, a database) the user can fix.

It lives here, with no import, because every package may raise one: `providers` and `benchmark`
import nothing of the project and `store` imports `benchmark` only. The command line
(engine/cli.py) prints a `UserError` as one line `error: ...` and exits 2, never with a traceback;
any other exception is a bug and keeps its traceback. Provider failures (providers/errors.py) are
not user errors: they are stored per item.
"""


class UserError(Exception):
    """Bad input (config, data, database, flags); the message is one line naming what to fix."""
