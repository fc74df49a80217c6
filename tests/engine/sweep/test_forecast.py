"""`sweep --estimate` (engine/sweep/forecast.py): the models' calls and the helpers', priced, nothing called."""

from __future__ import annotations

import io

import pytest

from engine.sweep.forecast import forecast, print_forecast
from engine.sweep.plan import SweepOptions

PRICE = "price = { input_per_mtok = 2.0, output_per_mtok = 8.0 }\n"


def _models(tmp_path):
    common = 'provider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    path = tmp_path / "models.toml"
    path.write_text(f'[[models]]\nname = "m1"\nmodel = "small"\n{common}{PRICE}\n'
                    f'[judge]\nmodel = "big"\n{common}{PRICE}\n'
                    f'[extractor]\nname = "ex"\nmodel = "tiny"\n{common}{PRICE}')
    return path


def test_the_judge_and_the_extractor_are_forecast_at_their_price(tmp_path, data_dir):
    opts = SweepOptions(models_path=_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["lcsts", "copa"], limit=5)
    rows = {r.model: r for r in forecast(opts)}
    assert list(rows) == ["m1", "judge", "extractor ex"] and rows["m1"].items == 10
    judge, ex = rows["judge"], rows["extractor ex"]
    # One verdict per lcsts answer (copa is not judged); a reading per copa answer at most (lcsts is free text).
    assert (judge.items, ex.items) == (5, 5)
    assert judge.note == "one call per judged answer" and ex.note.startswith("at most")
    for r in (judge, ex):
        assert r.input_tokens > 0 and r.cost_usd == pytest.approx((2.0 * r.input_tokens + 8.0 * r.output_tokens) / 1e6)
    assert ex.output_tokens == 5 * 16 and judge.output_tokens == 5 * 200  # their reply caps
    out = io.StringIO()
    print_forecast(list(rows.values()), out)
    total = [line for line in out.getvalue().splitlines() if line.startswith("total")][0]
    assert f"{sum(r.cost_usd for r in rows.values()):,.4f}" in total


def test_stored_answers_waiting_for_a_verdict_are_forecast_too(tmp_path, data_dir):
    from msgspec.structs import replace

    from engine.sweep.plan import plan_sweep
    from store.db import connect
    from store.results.writer import insert_rows
    from tests.store.helpers import row

    opts = SweepOptions(models_path=_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["lcsts"], limit=5)
    (planned,) = plan_sweep(opts, check_env=False).planned
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [replace(row("m1", "lcsts", i), response="摘要") for i in planned.ids])  # answered, not judged
    con.close()
    rows = {r.model: r for r in forecast(opts)}
    assert rows["m1"].items == 0 and rows["judge"].items == 5 and rows["judge"].cost_usd > 0


# ------------------------------------------------------------ interactive datasets

def _episode_models(tmp_path, memory="context"):
    common = 'provider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    path = tmp_path / "models.toml"
    path.write_text(f'[[models]]\nname = "m1"\nmodel = "small"\nmemory = "{memory}"\n{common}{PRICE}\n'
                    f'[user_simulator]\nmodel = "seeker"\nmax_tokens = 100\n{common}'
                    'price = { input_per_mtok = 1.0, output_per_mtok = 4.0 }\n')
    return path


def _bases(sc, session, memory, turns):
    """The prompts' own sizes (the builders' text), without the dialogue: what the arithmetic below adds to."""
    from benchmark.dataset import Message
    from benchmark.episodes.dataset import companion_messages
    from benchmark.episodes.seeker import seeker_messages
    from engine.run.context import prompt_tokens

    sess = sc.sessions[session]
    at = lambda xs, t: next((x for x in xs if x.turn == t), None)  # noqa: E731
    earlier = [()] * session
    comp = prompt_tokens(companion_messages(sc, session, (), earlier=earlier, memory=memory))
    opening = prompt_tokens(seeker_messages(sc, session, (), event=at(sess.events, 1), probe=at(sess.probes, 1),
                                            earlier=earlier))
    seeker = [prompt_tokens(seeker_messages(sc, session, (), event=at(sess.events, t + 1),
                                            probe=at(sess.probes, t + 1), earlier=earlier,
                                            emotion=sc.start_emotion)) for t in range(1, turns + 1)]
    own = prompt_tokens([Message("user", sess.opening)]) if sess.opening else None
    return comp, opening, seeker, own


def test_an_episode_counts_every_call_and_the_growing_dialogue_by_hand(tmp_path, data_dir):
    """Two exchanges per session, companion replies at 256 tokens (the dataset's cap), seeker replies at 100
    (the simulator's max_tokens): the sums below are worked out by hand from the dialogue's growth."""
    from benchmark.episodes.dataset import scenario_of
    from engine.sweep.episode_forecast import episode_calls
    from engine.sweep.plan import plan_sweep

    C, S, T = 256, 100, 2
    opts = SweepOptions(models_path=_episode_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["synthetic_episodes"], limit=12, turns=T)
    (planned,) = plan_sweep(opts, check_env=False).planned
    shapes = set()
    for item in planned.items:
        sc = scenario_of(item)
        got = episode_calls(item, companion_out=C, seeker_out=S, memory="context")
        comp0, open0, seek0, own0 = _bases(sc, 0, "context", T)
        # Session 1. Opening O: the scenario's words (no call) or the simulator's reply at its cap (one call).
        O = own0 if own0 is not None else S
        sim_calls, sim_in = (0, 0) if own0 is not None else (1, open0)
        # Companion: call 1 sees O, call 2 sees O + C + S.   Simulator: call t sees what the companion saw + C.
        comp_calls, comp_in = 2, 2 * comp0 + O + (O + C + S)
        sim_calls, sim_in = sim_calls + 2, sim_in + (seek0[0] + O + C) + (seek0[1] + O + C + S + C)
        first = O + 2 * (C + S)  # session 1 played to its cap
        if len(sc.sessions) == 2:  # session 2 opens with a probe: always a simulator call, seeing session 1
            comp1, open1, seek1, _ = _bases(sc, 1, "context", T)
            O1 = S
            sim_calls, sim_in = sim_calls + 1, sim_in + open1 + first
            comp_calls, comp_in = comp_calls + 2, comp_in + 2 * (comp1 + first) + O1 + (O1 + C + S)
            sim_calls = sim_calls + 2
            sim_in += (seek1[0] + first + O1 + C) + (seek1[1] + first + O1 + C + S + C)
        # What a judge reading the transcript is sent: every session's dialogue at its cap.
        assert got.dialogue == first + ((S + 2 * (C + S)) if len(sc.sessions) == 2 else 0)
        shapes.add((own0 is not None, len(sc.sessions)))
        assert (got.companion_calls, got.companion_in, got.companion_out) == (comp_calls, comp_in, comp_calls * C)
        assert (got.simulator_calls, got.simulator_in, got.simulator_out) == (sim_calls, sim_in, sim_calls * S)
    assert len(shapes) >= 3  # own words or not, one session or two: the cases above are all exercised


def test_the_simulator_gets_a_forecast_row_and_finished_episodes_are_not_counted(tmp_path, data_dir):
    from msgspec.structs import replace

    from engine.sweep.episode_forecast import episode_calls
    from engine.sweep.plan import plan_sweep
    from store.db import connect
    from store.results.writer import insert_rows
    from tests.store.helpers import row

    opts = SweepOptions(models_path=_episode_models(tmp_path), db=tmp_path / "r.duckdb", data_dir=data_dir,
                        datasets=["synthetic_episodes"], limit=5, turns=3)
    (planned,) = plan_sweep(opts, check_env=False).planned
    calls = {it.id: episode_calls(it, companion_out=256, seeker_out=100, memory="context") for it in planned.items}
    rows = {r.model: r for r in forecast(opts)}
    assert list(rows) == ["m1", "user_simulator"]
    m1, sim = rows["m1"], rows["user_simulator"]
    assert m1.items == 5 and sim.items == sum(c.simulator_calls for c in calls.values())
    assert m1.input_tokens == sum(c.companion_in for c in calls.values())
    assert m1.output_tokens == sum(c.companion_out for c in calls.values())
    assert f"up to {sum(c.companion_calls for c in calls.values())} calls" in m1.note
    assert sim.cost_usd == pytest.approx((1.0 * sim.input_tokens + 4.0 * sim.output_tokens) / 1e6)
    assert sim.output_tokens == 100 * sim.items
    # One episode finished: neither the companion nor the simulator is asked for it again.
    done = planned.ids[0]
    con = connect(tmp_path / "r.duckdb")
    insert_rows(con, [replace(row("m1", "synthetic_episodes", done), response="{}")])
    con.close()
    again = {r.model: r for r in forecast(opts)}
    assert again["m1"].items == 4
    assert again["user_simulator"].items == sim.items - calls[done].simulator_calls
    assert again["user_simulator"].input_tokens == sim.input_tokens - calls[done].simulator_in


def test_endpoint_memory_sends_the_companion_no_earlier_session(tmp_path, data_dir):
    from benchmark.episodes.dataset import scenario_of
    from engine.sweep.episode_forecast import episode_calls
    from engine.sweep.plan import plan_sweep

    opts = SweepOptions(models_path=_episode_models(tmp_path, "endpoint"), db=tmp_path / "r.duckdb",
                        data_dir=data_dir, datasets=["synthetic_episodes"], limit=12, turns=2)
    (planned,) = plan_sweep(opts, check_env=False).planned
    two = [it for it in planned.items if len(it.gold["sessions"]) == 2]
    assert two
    for it in two:
        ctx = episode_calls(it, companion_out=256, seeker_out=100, memory="context")
        end = episode_calls(it, companion_out=256, seeker_out=100, memory="endpoint")
        # Session 2's two companion calls each leave out session 1: its dialogue (opening, 2 x (C + S)) and
        # the lines that frame it.
        sc = scenario_of(it)
        first = (_bases(sc, 0, "context", 2)[3] or 100) + 2 * (256 + 100)
        framing = _bases(sc, 1, "context", 2)[0] - _bases(sc, 1, "endpoint", 2)[0]
        assert ctx.companion_in - end.companion_in == 2 * (first + framing) and framing > 0
        assert (ctx.simulator_in, ctx.companion_calls) == (end.simulator_in, end.companion_calls)
