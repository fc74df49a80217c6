"""Loopback servers give unset settings their defaults: slots -> max_concurrency, the window ->
context_tokens, and a timeout that grows with the prompt; remote endpoints are left alone."""

import socket

import pytest

from simulator.server import SimServerProcess
from engine.config.load import load_models
from engine.run.local_server import LOCAL_S_PER_TOKEN, ServerFacts, probe_server, with_server_defaults
from tests.integration.helpers import LLAMA_URL, llama_reachable


def _cfg(tmp_path, url, extra=""):
    p = tmp_path / "models.toml"
    p.write_text(f'[[models]]\nname = "a"\nprovider = "openai"\nbase_url = "{url}"\nmodel = "a"\n{extra}\n'
                 '[[models]]\nname = "remote"\nprovider = "openai"\nbase_url = "https://api.example.com/v1"\n'
                 'model = "r"\n')
    return load_models(p)


def test_a_llama_cpp_server_sets_concurrency_window_and_timeout(tmp_path):
    with SimServerProcess(slots=2, n_ctx=2048) as sim:
        assert probe_server(sim.base_url) == ServerFacts("llama.cpp", 2, 2048)
        a, remote = with_server_defaults(_cfg(tmp_path, sim.base_url), quiet=True).models
        mine = with_server_defaults(_cfg(tmp_path, sim.base_url, "max_concurrency = 8\ncontext_tokens = 1024"),
                                    quiet=True).models[0]
    assert (a.max_concurrency, a.context_tokens, a.timeout_per_token_s) == (2, 2048, LOCAL_S_PER_TOKEN)
    # What models.toml says wins; 8 in flight on 2 slots wait up to 4 turns: the timeout allows for it.
    assert (mine.max_concurrency, mine.context_tokens, mine.timeout_per_token_s) == (8, 1024, 4 * LOCAL_S_PER_TOKEN)
    assert (remote.max_concurrency, remote.context_tokens, remote.timeout_per_token_s) == (None, None, None)
    assert remote.concurrency == 16


def test_a_server_that_says_nothing_keeps_the_defaults(tmp_path):
    with socket.socket() as s:  # a closed port
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    a = with_server_defaults(_cfg(tmp_path, url), quiet=True).models[0]
    assert (a.max_concurrency, a.context_tokens, a.concurrency) == (None, None, 16)
    with SimServerProcess() as sim:  # no /props: an OpenAI-compatible server of unknown shape
        assert probe_server(sim.base_url) == ServerFacts("unknown")


@pytest.mark.llama
@pytest.mark.skipif(not llama_reachable(), reason=f"llama.cpp server not reachable at {LLAMA_URL}")
def test_llama_cpp_pythons_server_has_one_slot(tmp_path):
    """It has no /props (nor any report of its window); its /openapi.json names it."""
    assert probe_server(LLAMA_URL) == ServerFacts("llama-cpp-python", 1, None)
    assert with_server_defaults(_cfg(tmp_path, LLAMA_URL), quiet=True).models[0].max_concurrency == 1
