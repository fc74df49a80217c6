"""A suite's `samples = k` on a dataset (plays per scenario of an interactive dataset): parsed and checked."""

from __future__ import annotations

import tomllib

import pytest

from benchmark.suites.suite import SuiteError, parse_suite

SUITE = """[suite]
name = "s"
[[ability]]
id = "a"
[[ability.sub_ability]]
id = "sa"
[[ability.sub_ability.task]]
id = "t"
level = "M"
datasets = ["esconv_support"]
[datasets]
esconv_support = {body}
"""


def _parse(body: str):
    return parse_suite(tomllib.loads(SUITE.replace("{body}", body)), "s.toml")


def test_samples_is_read_per_dataset():
    assert _parse('{ name = "ESConv", samples = 3 }').dataset_specs[0].samples == 3
    assert _parse('"ESConv"').dataset_specs[0].samples is None


@pytest.mark.parametrize("value", ["0", "-1", "true", '"3"', "2.5"])
def test_samples_must_be_a_positive_integer(value):
    with pytest.raises(SuiteError, match=r"s.toml: \[datasets\].esconv_support.samples: expected an integer >= 1"):
        _parse(f"{{ samples = {value} }}")
