"""What answered a row: URLs without credentials, loopback ports, derivation hashes, the change message."""

from __future__ import annotations

import msgspec

from benchmark import registry
from engine.config.models import ModelConfig, public_url
from engine.sweep.identity import (
    derivation,
    describe_change,
    identity_hash,
    model_identity,
    without_loopback_port,
)


def test_public_url_drops_credentials_query_and_fragment():
    assert public_url("https://user:pa55@api.example.com:8443/v1/?key=sk-1#x") == "https://api.example.com:8443/v1"
    assert public_url(None) is None


def test_a_loopback_port_is_not_identity_but_a_remote_one_is():
    m = ModelConfig(name="m", provider="openai", model="x", base_url="http://127.0.0.1:40001/v1")
    other_port = msgspec.structs.replace(m, base_url="http://127.0.0.1:40002/v1")
    remote = msgspec.structs.replace(m, base_url="http://10.0.0.2:40001/v1")
    remote_port = msgspec.structs.replace(m, base_url="http://10.0.0.2:40002/v1")
    ds = registry.get("synthetic")
    assert identity_hash(model_identity(m, ds)) == identity_hash(model_identity(other_port, ds))
    assert identity_hash(model_identity(remote, ds)) != identity_hash(model_identity(remote_port, ds))


def test_local_models_are_identified_by_their_weights():
    m = ModelConfig(name="m", provider="local", model="smollm2", base_url="http://127.0.0.1:5/v1", gguf="/w/a.gguf")
    ds = registry.get("synthetic")
    assert model_identity(m, ds)["base_url"] == "local:/w/a.gguf"
    other = msgspec.structs.replace(m, gguf="/w/b.gguf")
    assert identity_hash(model_identity(m, ds)) != identity_hash(model_identity(other, ds))


def test_derivation_follows_the_hook_source():
    class A:
        @staticmethod
        def derive(row):
            return {"x": "Who said it?"}

    class B:
        @staticmethod
        def derive(row):
            return {"x": "Who wrote it?"}

    assert derivation(registry.get("synthetic")) is None
    assert derivation(A()) != derivation(B()) and derivation(A()) == derivation(A())


def test_describe_change_names_each_changed_field_and_skips_unknown_ones():
    old = {"provider": "openai", "model": "gpt-4o-2024-08-06", "context_tokens": None}
    new = {"provider": "openai", "base_url": "https://x/v1", "model": "gpt-4o-2024-11-20", "context_tokens": 8192,
           "derivation": "ab"}
    assert describe_change(old, new) == ["model id gpt-4o-2024-08-06 -> gpt-4o-2024-11-20",
                                         "context_tokens unset -> 8192"]


def test_an_ipv6_loopback_port_is_not_identity_either():
    m = ModelConfig(name="m", provider="openai", model="x", base_url="http://[::1]:40001/v1")
    other_port = msgspec.structs.replace(m, base_url="http://user:pw@[::1]:40002/v1/")
    ds = registry.get("synthetic")
    assert model_identity(m, ds)["base_url"] == "http://[::1]/v1"
    assert identity_hash(model_identity(m, ds)) == identity_hash(model_identity(other_port, ds))
    # As earlier versions stored it (brackets lost, port kept): the same endpoint.
    assert without_loopback_port("http://::1:8090/v1") == "http://[::1]/v1"
    assert without_loopback_port("http://127.0.0.2:9/v1") == "http://127.0.0.2/v1"
    assert without_loopback_port("https://u:p@api.example.com:8443/v1?k=1") == "https://api.example.com:8443/v1"


def test_what_a_loopback_server_serves_is_identity_and_unknown_is_no_change():
    m = ModelConfig(name="m", provider="openai", model="x", base_url="http://127.0.0.1:40001/v1")
    ds = registry.get("synthetic")
    plain, a, b = (model_identity(m, ds, s) for s in (None, "a.gguf", "b.gguf"))
    assert "served" not in plain  # nothing said: the identity every earlier row of it has
    assert len({identity_hash(d) for d in (plain, a, b)}) == 3
    assert describe_change(a, b) == ["served model a.gguf -> b.gguf"]
    assert describe_change(plain, a) == [] and describe_change(a, plain) == []  # unknown then, or now


def test_served_model_reads_props_then_the_model_list(monkeypatch):
    from engine.run import local_server

    answers = {"http://127.0.0.1:5/props": {"model_path": "/w/SmolLM2.Q4.gguf", "model_alias": "smol"},
               "http://127.0.0.1:6/v1/models": {"data": [{"id": "b"}, {"id": "a"}]}}

    def get_json(url, headers, timeout=local_server.PROBE_TIMEOUT_S):
        if url not in answers:
            raise OSError("404")
        return answers[url]

    monkeypatch.setattr(local_server, "_get_json", get_json)
    assert local_server.served_model("http://127.0.0.1:5/v1") == "SmolLM2.Q4.gguf as smol"
    assert local_server.served_model("http://127.0.0.1:6/v1") == "a, b"
    assert local_server.served_model("http://127.0.0.1:7/v1") is None  # says nothing (or is down)
