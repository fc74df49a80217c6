import pytest

from engine.config.load import load_models
from benchmark.errors import UserError

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
        (lambda t: t.replace('model = "m-a"', 'model = "m-a"\nunreachable_after_s = 0'),
         "models[0] (name 'a'): unreachable_after_s must be > 0"),
        (lambda t: t.replace('model = "m-a"', 'model = "m-a"\ntimeout_per_token_s = -0.1'),
         "models[0] (name 'a'): timeout_per_token_s must be >= 0"),
        # Generation values an API refuses, or that no rate limit could ever admit.
        (lambda t: t.replace("max_tokens = 32", "max_tokens = 0"), "models[0] (name 'a'): max_tokens must be >= 1"),
        (lambda t: t.replace("temperature = 0.0", "temperature = -1"), "temperature = -1 is out of range (0 to 2)"),
        (lambda t: t.replace("max_concurrency = 8", "max_concurrency = 8\ntop_p = 1.5"), "top_p = 1.5 is out of range"),
        (lambda t: t.replace("max_tokens = 32", "max_tokens = 200000"), "max_tokens 200000 is above accounts.acme.tpm"),
        (lambda t: t.replace("max_tokens = 32", "max_tokens = 64\ntpm = 50"), "max_tokens 64 is above tpm 50"),
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


@pytest.mark.parametrize("key", ["sk-abc\r\n", "sk-a\tbc", "sk-abc\x7f"])
def test_api_key_with_control_characters_names_the_variable_not_the_key(tmp_path, monkeypatch, key):
    monkeypatch.setenv("ENGINE_TEST_KEY", key)
    with pytest.raises(UserError) as e:
        load_models(write(tmp_path, GOOD))
    msg = str(e.value)
    assert "models[1] (name 'b')" in msg and "ENGINE_TEST_KEY contains a control character" in msg
    assert "sk-a" not in msg and "\n" not in msg


@pytest.mark.parametrize("url, expected", [
    ("http://bob:s3cret-pass@127.0.0.1:9/v1", "base_url carries credentials (user:password@"),
    ("http://bob@127.0.0.1:9/v1", "base_url carries credentials"),
    ("http://127.0.0.1:9/v1?key=s3cret-pass", "base_url has a query (?...)"),
    ("http://127.0.0.1:9/v1#s3cret-pass", "base_url has a fragment (#...)"),
])
def test_base_url_credentials_and_queries_are_refused_without_showing_them(tmp_path, monkeypatch, url, expected):
    """With a key, user:pass@ crashed the sweep (aiohttp cannot send both); without one, a server's echo of
    the Basic credentials was stored; a ?query made every request a 404."""
    monkeypatch.setenv("ENGINE_TEST_KEY", "sk-long-enough-key")
    with pytest.raises(UserError) as e:
        load_models(write(tmp_path, GOOD.replace("http://127.0.0.1:9/v1", url, 1)))
    msg = str(e.value)
    assert "models[0] (name 'a')" in msg and expected in msg
    assert "s3cret" not in msg and "bob" not in msg and "\n" not in msg


def test_a_key_too_short_to_be_secret_is_said_once_at_load(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ENGINE_TEST_KEY", "EMPTY")
    load_models(write(tmp_path, GOOD))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "models[1] (name 'b')" in err[0] and "ENGINE_TEST_KEY has 5 character(s)" in err[0]
    assert "EMPTY" not in err[0] and "not hidden" in err[0]
    monkeypatch.setenv("ENGINE_TEST_KEY", "sk-long-enough-key")
    load_models(write(tmp_path, GOOD))
    assert capsys.readouterr().err == ""


def test_missing_env_var_skips_that_model_only(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGINE_TEST_KEY", raising=False)
    cfg = load_models(write(tmp_path, GOOD))
    runnable, skipped = cfg.runnable()
    assert [m.name for m in runnable] == ["a"]
    assert [(m.name, why) for m, why in skipped] == [("b", "environment variable ENGINE_TEST_KEY is not set")]


def test_no_model_with_its_key_is_an_error(tmp_path, monkeypatch):
    monkeypatch.delenv("ENGINE_TEST_KEY", raising=False)
    monkeypatch.delenv("ENGINE_TEST_KEY2", raising=False)
    text = GOOD.replace('account = "acme"\nmax_tokens = 32', 'account = "acme"\nmax_tokens = 32\napi_key_env = "ENGINE_TEST_KEY2"')
    path = write(tmp_path, text)
    with pytest.raises(UserError) as e:
        load_models(path)
    assert str(path) in str(e.value) and "ENGINE_TEST_KEY, ENGINE_TEST_KEY2" in str(e.value)
    assert len(load_models(path, check_env=False).models) == 2  # --estimate needs no key


PROVIDERS = """
[accounts.shared]
rpm = 100
max_concurrency = 12

[[models]]
name = "claude"
provider = "anthropic"
model = "claude-opus-4-20250514"
max_tokens = 64
price = { input_per_mtok = 15, output_per_mtok = 75 }

[[models]]
name = "gemini"
provider = "gemini"
model = "gemini-2.0-flash"
account = "shared"

[[models]]
name = "doubao"
provider = "openai"
base_url = "https://ark.cn-beijing.volces.com/api/v3"
model = "doubao-pro-32k-241215"

[[models]]
name = "glm"
provider = "openai"
base_url = "https://open.bigmodel.cn/api/paas/v4/"
model = "glm-4-flash"

[[models]]
name = "gpt-5"
provider = "openai"
model = "gpt-5-2025-08-07"
reasoning = true
adaptive = false
"""


def test_providers_prices_reasoning_and_account_pools(tmp_path):
    from engine.config.models import base_url

    cfg = load_models(write(tmp_path, PROVIDERS))
    claude, gemini, _doubao, glm, gpt5 = cfg.models
    assert base_url(claude) == "https://api.anthropic.com"
    assert base_url(gemini) == "https://generativelanguage.googleapis.com"
    assert base_url(glm) == "https://open.bigmodel.cn/api/paas/v4"
    assert claude.price.cost(1_000_000, 100_000) == pytest.approx(22.5)
    assert gpt5.reasoning is True and gpt5.adaptive is False
    assert cfg.accounts["shared"].max_concurrency == 12


@pytest.mark.parametrize("mutate, expected", [
    (lambda t: t.replace('provider = "anthropic"', 'provider = "anthropic"\nbase_url = "https://api.anthropic.com/v1"'),
     "is the API root, without v1"),
    (lambda t: t.replace('provider = "gemini"', 'provider = "gemini"\nbase_url = "https://generativelanguage.googleapis.com/v1beta"'),
     "is the API root, without v1beta"),
    (lambda t: t.replace("input_per_mtok = 15", "input_per_mtok = -1"), "price: per-million-token prices must be >= 0"),
    (lambda t: t.replace("input_per_mtok = 15, ", ""), "missing key `input_per_mtok`"),
    (lambda t: t.replace('model = "gemini-2.0-flash"', 'model = "gemini-2.0-flash"\nreasoning = true'),
     "reasoning applies to provider 'openai' only"),
    (lambda t: t.replace('model = "glm-4-flash"', 'model = "glm-4-flash"\napi_key_env = "sk-live-abc123"'),
     "is not an environment variable name"),
    (lambda t: t.replace("max_concurrency = 12", "max_concurrency = 0"), "accounts.shared.max_concurrency must be > 0"),
    (lambda t: t.replace('model = "claude-opus-4-20250514"', 'model = "claude-opus-4-20250514"\nanswer_constraint = "json_schema"'),
     "answer_constraint 'json_schema' is not available for provider 'anthropic' (its API has no constrained decoding)"),
    (lambda t: t.replace('model = "gemini-2.0-flash"', 'model = "gemini-2.0-flash"\nanswer_constraint = "grammar"'),
     "answer_constraint 'grammar' is not available for provider 'gemini' (use 'json_schema')"),
    (lambda t: t.replace('model = "glm-4-flash"', 'model = "glm-4-flash"\nanswer_constraint = "regex"'),
     "answer_constraint 'regex' is not available for provider 'openai' (use 'grammar' or 'json_schema')"),
])
def test_bad_provider_settings(tmp_path, mutate, expected):
    path = write(tmp_path, mutate(PROVIDERS))
    with pytest.raises(UserError) as e:
        load_models(path)
    assert expected in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_answer_constraint_is_part_of_the_request_stamp(tmp_path):
    text = PROVIDERS.replace('model = "glm-4-flash"', 'model = "glm-4-flash"\nanswer_constraint = "json_schema"')
    glm = load_models(write(tmp_path, text)).models[3]
    assert glm.request_stamp() == {**glm.generation(), "answer_constraint": "json_schema"}
    assert "answer_constraint" not in glm.generation()  # it is not a generation parameter sent as such
    plain = load_models(write(tmp_path, PROVIDERS)).models[3]
    assert plain.request_stamp() == plain.generation()  # stamps of unconstrained models are unchanged


def test_the_30_models_example_is_valid(monkeypatch):
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "models-30.toml"
    cfg = load_models(path, check_env=False)
    assert len(cfg.models) == 30
    assert {m.provider for m in cfg.models} == {"openai", "anthropic", "gemini"}
    assert all(m.api_key_env and m.price for m in cfg.models)


def test_missing_file(tmp_path):
    with pytest.raises(UserError, match="cannot read models file"):
        load_models(tmp_path / "nope.toml")


def test_local_provider_rules(tmp_path):
    base = '[[models]]\nname = "l"\nprovider = "local"\nmodel = "smollm2"\n'
    assert load_models(write(tmp_path, base)).models[0].provider == "local"
    for extra, needle in [('base_url = "http://127.0.0.1:1/v1"\n', "takes no base_url"),
                          ('gguf = "/nope.gguf"\n', "is not a file"),
                          ('api_key_env = "X"\n', "needs no api_key_env")]:
        with pytest.raises(UserError, match=needle):
            load_models(write(tmp_path, base + extra))


def test_sweep_defaults_table(tmp_path):
    cfg = load_models(write(tmp_path, '[sweep]\ndatasets = ["sst2"]\nlimit = 5\npull = true\n\n'
                                      '[[models]]\nname = "a"\nprovider = "openai"\n'
                                      'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'))
    assert cfg.sweep.datasets == ["sst2"] and cfg.sweep.limit == 5 and cfg.sweep.pull
    with pytest.raises(UserError, match="unknown"):
        load_models(write(tmp_path, '[sweep]\nbogus = 1\n[[models]]\nname = "a"\nprovider = "openai"\n'
                                    'base_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'))
