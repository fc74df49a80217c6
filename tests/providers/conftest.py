import pytest
from aiohttp.test_utils import TestServer

from simulator.core import config_from_knobs
from simulator.server import build_app


@pytest.fixture
async def sim():
    """start(**knobs) -> (root URL, app state) of an in-process simulated server (all wire formats)."""
    servers: list[TestServer] = []

    async def start(**knobs):
        from simulator.openai import STATE

        app = build_app(config_from_knobs(**knobs))
        server = TestServer(app)
        await server.start_server()
        servers.append(server)
        return str(server.make_url("")).rstrip("/"), app[STATE]

    yield start
    for server in servers:
        await server.close()
