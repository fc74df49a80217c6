"""What answered a row: URLs without credentials, loopback ports, derivation hashes, the change message."""

from __future__ import annotations

import msgspec

from benchmark import registry
from engine.config import ModelConfig, public_url
from engine.sweep.identity import (
    derivation,
    describe_change,
    identity_hash,
    model_identity,
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
