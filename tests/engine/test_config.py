import pytest

from engine.config import load_models
from engine.errors import UserError

GOOD = """
[defaults]
max_concurrency = 4
temperature = 0.0

[accounts.acme]
rpm = 600
tpm = 100000

[[models]]
name = "a"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m-a"
account = "acme"
max_tokens = 32
metadata = { institution = "Acme", open_source = false, params_b = 7, family = "acme" }

[[models]]
name = "b"
provider = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m-b"
account = "acme"
api_key_env = "ENGINE_TEST_KEY"
max_concurrency = 8
"""


def write(tmp_path, text):
    p = tmp_path / "models.toml"
    p.write_text(text)
    return p


def test_good_file_with_defaults_and_shared_account(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_TEST_KEY", "k")
    cfg = load_models(write(tmp_path, GOOD))
    a, b = cfg.models
    assert a.max_concurrency == 4 and b.max_concurrency == 8
    assert a.account == b.account == "acme"
    assert cfg.accounts["acme"].rpm == 600
    assert a.generation() == {"temperature": 0.0, "max_tokens": 32}
    assert a.metadata["institution"] == "Acme"
    assert b.api_key() == "k"


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda t: t.replace('model = "m-a"', 'model = "m-a"\nbogus = 1'), "models[0] (name 'a'): unknown key `bogus`"),
        (lambda t: t.replace('name = "b"', 'name = "a"'), "duplicate model name 'a'"),
        (lambda t: t.replace("http://127.0.0.1:9/v1", "not a url", 1), "base_url 'not a url' is not an http(s) URL"),
        (lambda t: t.replace("http://127.0.0.1:9/v1", "http://127.0.0.1:9", 1), "must include the API version path"),
        (lambda t: t.replace('account = "acme"', 'account = "nope"', 1), "account 'nope' is not defined"),
        (lambda t: t.replace('provider = "openai"', 'provider = "nope"', 1), "unknown provider 'nope'"),
        (lambda t: t.replace("max_concurrency = 8", "max_concurrency = 0"), "max_concurrency must be >= 1"),
        (lambda t: t.replace("[[models]]", "[[models]", 1), "invalid TOML"),
        (lambda t: t.replace('model = "m-a"\n', ""), "models[0] (name 'a'): missing key `model`"),
        (lambda t: t.replace("max_concurrency = 8", 'max_concurrency = "8x"'), "models[1] (name 'b').max_concurrency"),
    ],
)
def test_bad_input_names_file_and_key(tmp_path, monkeypatch, mutate, expected):
    monkeypatch.setenv("ENGINE_TEST_KEY", "k")
    path = write(tmp_path, mutate(GOOD))
    with pytest.raises(UserError) as e:
        load_models(path)
    msg = str(e.value)
    assert expected in msg
    assert str(path) in msg
    assert "\n" not in msg


def test_missing_env_var_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGINE_TEST_KEY", raising=False)
    with pytest.raises(UserError, match=r"models\[1\] \(name 'b'\): api_key_env: environment variable ENGINE_TEST_KEY is not set"):
        load_models(write(tmp_path, GOOD))


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="cannot read models file"):
        load_models(tmp_path / "nope.toml")
