"""An interactive dataset's turns per session in a plan: --turns, else the suite's `turns`, else its own default."""

from __future__ import annotations

import pytest

from benchmark.episodes.dataset import settings_of
from benchmark.errors import UserError
from engine.sweep.plan import SweepOptions, plan_sweep

SUITE = """[suite]
name = "turns-test"
version = "1"
[[ability]]
id = "companionship"
[[ability.sub_ability]]
id = "dialogue"
[[ability.sub_ability.task]]
id = "support"
level = "M"
datasets = ["synthetic_episodes", "copa"]
[datasets]
synthetic_episodes = {{ name = "Synthetic"{turns} }}
copa = {{ name = "COPA"{copa_turns} }}
"""


def _plan(tmp_path, data_dir, *, suite_turns=None, copa_turns=None, flag=None, datasets=("synthetic_episodes",)):
    models = tmp_path / "models.toml"
    common = 'provider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    models.write_text(f'[[models]]\nname = "m1"\nmodel = "m"\n{common}\n[user_simulator]\nmodel = "s"\n{common}')
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(turns=f", turns = {suite_turns}" if suite_turns is not None else "",
                                  copa_turns=f", turns = {copa_turns}" if copa_turns is not None else ""))
    opts = SweepOptions(models_path=models, db=tmp_path / "r.duckdb", data_dir=data_dir, suite=str(suite),
                        datasets=list(datasets), limit=3, turns=flag, quiet=True)
    return {p.id: p for p in plan_sweep(opts, check_env=False).planned}


def _turns(planned) -> set[int]:
    """The turns the episode lane plays: what each item's settings carry, and the dataset's own."""
    return {settings_of(it).turns for it in planned.items} | {planned.dataset.turns}


def test_the_flag_beats_the_suite_and_the_suite_beats_the_default(tmp_path, data_dir):
    assert _turns(_plan(tmp_path, data_dir)["synthetic_episodes"]) == {4}  # synthetic_episodes' own default
    assert _turns(_plan(tmp_path, data_dir, suite_turns=2)["synthetic_episodes"]) == {2}
    assert _turns(_plan(tmp_path, data_dir, suite_turns=2, flag=6)["synthetic_episodes"]) == {6}


def test_a_suites_turns_change_the_prompt_stamp_like_the_flag(tmp_path, data_dir):
    by_suite = _plan(tmp_path, data_dir, suite_turns=2)["synthetic_episodes"].dataset
    by_flag = _plan(tmp_path, data_dir, flag=2)["synthetic_episodes"].dataset
    default = _plan(tmp_path, data_dir)["synthetic_episodes"].dataset
    # Stored episodes played for another number of turns are not taken as this plan's (resume's stamp check).
    assert by_suite.prompt_hash() == by_flag.prompt_hash() != default.prompt_hash()


def test_turns_on_a_single_turn_dataset_is_refused(tmp_path, data_dir):
    with pytest.raises(UserError, match=r"\[datasets\]\.copa\.turns: copa is not an interactive dataset"):
        _plan(tmp_path, data_dir, copa_turns=3, datasets=("synthetic_episodes", "copa"))
