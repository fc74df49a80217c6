"""Ray on demand: imported only by a sweep given `--cluster`, and connected for the length of the sweep.

Loopback stays loopback: on Linux Ray replaces 127.0.0.1 with the machine's address when a driver
connects, unless clusters are "disabled" for the platform (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0, which Ray
reads when it is imported), so a loopback address keeps every process on loopback. `local` starts a
single-node Ray in this process (always a new one: a bare `ray.init()` would join whatever cluster an
address file left behind says, even a dead one) without token authentication, since it listens on loopback
only; `auto` and HOST:PORT join a running cluster as Ray's own settings say.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from benchmark.errors import UserError
from engine.run.local_server import is_loopback

INSTALL_HINT = "pip install -e '.[cluster]'"
# The engine's namespace on a shared cluster: its named actors are found by this name and no other job's.
NAMESPACE = "moodengine"


def import_ray(address: str) -> ModuleType:
    """The `ray` module, or one UserError line saying how to install it (exit 2)."""
    if address == "local" or is_loopback(f"http://{address}"):
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise UserError(f"--cluster needs Ray, an optional extra: {INSTALL_HINT}") from None
    return ray


@contextlib.contextmanager
def connected(address: str, *, quiet: bool = False) -> Iterator[ModuleType]:
    """Ray connected to ``address`` ('local', 'auto' or HOST:PORT) for the block; disconnected after it (a
    `local` Ray is stopped with its processes)."""
    ray = import_ray(address)
    options: dict[str, Any] = dict(namespace=NAMESPACE, log_to_driver=not quiet, logging_level="WARNING")
    if address == "local":
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # loopback only; no token file under $HOME
        options.update(address="local", include_dashboard=False)
    else:
        options.update(address=address)
    try:
        ray.init(**options)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise UserError(f"--cluster {address}: cannot connect to Ray ({str(e).splitlines()[0]})") from None
    try:
        yield ray
    finally:
        ray.shutdown()
