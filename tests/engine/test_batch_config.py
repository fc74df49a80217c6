"""`batch = true` in models.toml: validation, defaults, price, and no effect on identity or stamps."""

import pytest

from engine.config.load import load_models
from benchmark.errors import UserError
from engine.sweep.identity import model_identity
from tests.engine.fakes import FakeDataset

BASE = """
[defaults]
batch = true

[[models]]
name = "gpt"
provider = "openai"
model = "gpt-4o-mini"
price = { input_per_mtok = 0.15, output_per_mtok = 0.6 }

[[models]]
name = "claude"
provider = "anthropic"
model = "claude-3-5-haiku"
batch_retry = "sync"
batch_poll_s = 5

[[models]]
name = "gem"
provider = "gemini"
model = "gemini-2.0-flash"
batch = false
"""


def write(tmp_path, text):
    p = tmp_path / "models.toml"
    p.write_text(text)
    return p


def test_defaults_and_per_model_batch_settings(tmp_path):
    gpt, claude, gem = load_models(write(tmp_path, BASE)).models
    assert gpt.batch and gpt.batch_retry == "batch" and gpt.batch_poll_s == 30.0
    assert claude.batch and claude.batch_retry == "sync" and claude.batch_poll_s == 5
    assert not gem.batch


def test_batch_price_is_half_the_listed_price_by_default(tmp_path):
    gpt = load_models(write(tmp_path, BASE)).models[0]
    assert gpt.price.batch().cost(1_000_000, 1_000_000) == pytest.approx((0.15 + 0.6) / 2)
    cheaper = BASE.replace("output_per_mtok = 0.6 }", "output_per_mtok = 0.6, batch_factor = 0.25 }")
    gpt = load_models(write(tmp_path, cheaper)).models[0]
    assert gpt.price.batch().cost(1_000_000, 0) == pytest.approx(0.15 / 4)


def test_batch_changes_neither_identity_nor_request_stamp(tmp_path):
    batched = load_models(write(tmp_path, BASE)).models[0]
    plain = load_models(write(tmp_path, BASE.replace("batch = true", "batch = false"))).models[0]
    assert batched.batch and not plain.batch
    assert model_identity(batched, FakeDataset()) == model_identity(plain, FakeDataset())
    assert batched.request_stamp() == plain.request_stamp()


@pytest.mark.parametrize("mutate, expected", [
    (lambda t: t + '\n[[models]]\nname = "l"\nprovider = "local"\nmodel = "smollm2"\n',
     "batch = true needs a provider with a batch API (openai, anthropic, gemini), not 'local'"),
    (lambda t: t.replace('batch_retry = "sync"', 'batch_retry = "later"'), "batch_retry must be"),
    (lambda t: t.replace("batch_poll_s = 5", "batch_poll_s = 0"), "batch_poll_s must be > 0"),
    (lambda t: t.replace("batch_poll_s = 5", "batch_max_requests = 0"), "batch_max_requests must be >= 1"),
    (lambda t: t.replace("output_per_mtok = 0.6 }", "output_per_mtok = 0.6, batch_factor = 2 }"),
     "price.batch_factor must be in (0, 1]"),
    (lambda t: t + '\n[judge]\nprovider = "local"\nmodel = "j"\nbatch = true\n',
     "judge: batch = true needs a provider with a batch API"),
    (lambda t: t + '\n[extractor]\nprovider = "openai"\nmodel = "x"\nbatch = true\nbatch_poll_s = 0\n',
     "extractor: batch_poll_s must be > 0"),
])
def test_bad_batch_settings_exit_with_one_line(tmp_path, mutate, expected):
    path = write(tmp_path, mutate(BASE))
    with pytest.raises(UserError) as e:
        load_models(path, check_env=False)
    assert expected in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_the_judge_and_the_extractor_may_be_batched(tmp_path):
    cfg = load_models(write(tmp_path, BASE + '\n[judge]\nprovider = "anthropic"\nmodel = "j"\nbatch = true\n'
                                             '\n[extractor]\nprovider = "gemini"\nmodel = "x"\nbatch = true\n'
                                             'batch_retry = "sync"\n'), check_env=False)
    assert cfg.judge is not None and cfg.judge.batch and cfg.judge.batch_retry == "batch"
    assert cfg.extractor is not None and cfg.extractor.batch and cfg.extractor.batch_retry == "sync"
