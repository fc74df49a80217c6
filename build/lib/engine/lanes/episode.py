"""The episode lane: one evaluated model's interactive items, each a dialogue with the [user_simulator].

An episode is one worker of a bounded pool (engine/run/workers.py) playing its scenario call by call:
the companion (this model, through its own adapters, limits and breaker) answers the dialogue so far,
then the simulator (engine/lanes/simulator.py, its own lane limits) answers as the seeker, with its
emotion. Each call is queued the moment the previous one returns, and the pool holds more episodes
than either side's concurrency, so both sides stay busy. Every call lands in the run's turn journal as it
returns, before the next call (one write(2): a kill -9 loses no returned turn, and no episode waits for a
database commit), then in `turns` (store/results/turns.py, its own Writer); the episode's `results` row is
put when it ends, after its turns are in the table. A rerun skips finished episodes (an `ok` results row) and continues an unfinished one
after its last kept turn, asking no stored turn again: the loop below replays stored turns in the
order it would have asked them, and asks only from the first one missing.

Seeds: each episode has one (a hash of dataset, item, play), sent where the wire takes it, so the
same command against the same servers plays the same transcript at temperature 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import msgspec

from benchmark.dataset import Message, stable_hash
from benchmark.episodes.dataset import EpisodeSettings, companion_messages, scenario_of, settings_of
from benchmark.episodes.scenario import Event, Probe, Scenario
from benchmark.episodes.scoring import Transcript, TurnRecord
from benchmark.episodes.seeker import SEEKER_PROMPT_VERSION, seeker_messages
from engine.config.models import ModelConfig
from engine.lanes.model_lane import Stamps, build_row
from engine.lanes.simulator import CONVERSATION_HEADER, SeekerTurn, Simulator, SimulatorOverBudget
from engine.lanes.work import Work
from engine.run.context import RunContext, cost_bound
from engine.run.generation import ProviderSet
from engine.run.workers import STOP, run_workers
from providers.base import CallOptions, ChatResult
from providers.errors import ProviderError, Unreachable
from store.results.turns import TurnJournal, TurnRow
from store.results.writer import ResultRow, Writer


class EpisodeStats:
    """Counts across every episode lane of a run (the summary and the live view read them)."""

    def __init__(self) -> None:
        self.episodes: Counter[str] = Counter()  # how episodes ended: end, cap, success, failure, blocked, error
        self.turns: Counter[str] = Counter()  # turns stored this run by status
        self.companion_calls = 0
        self.simulator_calls = 0

    def line(self) -> str:
        e, t = self.episodes, self.turns
        return (f"episodes: {sum(e.values())} ended this run ({', '.join(f'{k} {v}' for k, v in sorted(e.items()))}); "
                f"turns stored: {sum(t.values())} ({t['unreadable']} unreadable simulator replies, "
                f"{t['blocked']} blocked, {t['error']} call errors)")


class Shared(msgspec.Struct, kw_only=True, dict=True):
    """What every model's episode lane shares in a run."""

    simulator: Simulator
    turns: Writer
    stats: EpisodeStats
    sim_identity: str | None
    journal: TurnJournal | None = None  # None (an in-memory database): each turn waits for its commit


def lane_width(concurrency: int, simulator_concurrency: int, models: int) -> int:
    """Episodes one model's lane keeps in flight: enough to fill its own calls and its share of the
    simulator's (which every model with episodes shares). More would only queue for the simulator, each
    holding its dialogue in memory (with the whole simulator's width per model, 10 models held 3,520)."""
    return concurrency + -(-simulator_concurrency // max(1, models))


def episode_seed(dataset: str, item_id: str, sample: int) -> int:
    return int(stable_hash("episode-seed", dataset, item_id, sample, length=8), 16) & 0x3FFFFFFF


class EpisodeLane:
    """One model's interactive items (a Lane: engine/run/context.py)."""

    def __init__(self, m: ModelConfig, *, provider: ProviderSet, work: Iterator[Work], stamps: Stamps,
                 shared: Shared, stored: dict[tuple[str, str, int], list[TurnRow]], width: int):
        self.m, self.provider, self.work, self.stamps = m, provider, work, stamps
        self.shared, self.stored, self.width = shared, stored, width

    async def run(self, ctx: RunContext) -> None:
        async def one(w: Work) -> object:
            ep = Episode(self, w, ctx)
            try:
                row = await ep.play()
            except (Unreachable, SimulatorOverBudget):
                return STOP  # this episode and the rest stay unfinished: the next run continues them
            if row is None:
                return STOP
            await self.shared.turns.stored(ep.last_put)  # its turns in the table before its results row
            await ctx.answers.put(row)
            ctx.progress.advance(self.m.name, ok=row.status == "ok")
            return None

        await run_workers(self.work, width=self.width, handle=one)
        self.stamps.report_stop(ctx)


class Episode:
    """One play of one scenario, from its stored turns on."""

    def __init__(self, lane: EpisodeLane, w: Work, ctx: RunContext):
        self.lane, self.w, self.ctx = lane, w, ctx
        self.ds = w.planned.dataset
        self.scenario: Scenario = scenario_of(w.item)
        self.settings: EpisodeSettings = settings_of(w.item)
        self.seed = episode_seed(self.ds.id, w.item.id, w.sample) + (lane.m.seed or 0)
        self.kept = {(t.session, t.turn, t.role): t for t in lane.stored.pop((self.ds.id, w.item.id, w.sample), [])}
        self.records: list[TurnRecord] = []
        self.started = datetime.now(timezone.utc)
        self.tokens_in = self.tokens_out = 0
        self.latency = 0.0
        self.version: str | None = None
        self.last_put = 0  # the turns' writer's count of rows put after this episode's last turn
        m = lane.m
        self.conv = conv = stable_hash("conversation", m.name, self.ds.id, w.item.id, w.sample, length=16)
        body: dict[str, Any] = {"seed": self.seed}
        headers: dict[str, str] = {}
        if m.memory == "endpoint":  # the companion system keeps its own memory: tell it which conversation
            body["user"], headers[CONVERSATION_HEADER] = conv, conv
        self.call = CallOptions(body=body, headers=headers)

    # ------------------------------------------------------------ the dialogue

    async def play(self) -> ResultRow | None:
        sc, st = self.scenario, self.settings
        earlier: list[tuple[Message, ...]] = []
        emotion = sc.start_emotion
        end = "cap"
        for s, session in enumerate(sc.sessions[: st.sessions]):
            history: list[Message] = []
            opening = await self.seeker_turn(s, 0, history, earlier, _at(session.events, 1), _at(session.probes, 1),
                                             own=session.opening, emotion=emotion if s else None)
            if opening is None or isinstance(opening, ResultRow):
                return opening
            history.append(Message("user", opening.content))
            end = "cap"
            for t in range(1, st.turns + 1):
                reply = await self.companion_turn(s, t, history, earlier)
                if reply is None or isinstance(reply, ResultRow):
                    return reply
                if reply.role == "blocked":
                    return self.finish("blocked", blocked=reply.reason)
                history.append(Message("assistant", reply.content))
                seeker = await self.seeker_turn(s, t, history, earlier, _at(session.events, t + 1),
                                                _at(session.probes, t + 1), emotion=emotion)
                if seeker is None or isinstance(seeker, ResultRow):
                    return seeker
                history.append(Message("user", seeker.content))
                emotion = seeker.emotion if seeker.emotion is not None else emotion
                if st.success_at is not None and emotion >= st.success_at:
                    return self.finish("success")
                if st.failure_below is not None and emotion < st.failure_below:
                    return self.finish("failure")
                if seeker.end:
                    end = "end"
                    break
            earlier.append(tuple(history))
        return self.finish(end)

    async def companion_turn(self, s: int, t: int, history: list[Message],
                             earlier: list[tuple[Message, ...]]) -> TurnRecord | ResultRow | None:
        """The companion's reply t of session s (a record with role "blocked" when it declined)."""
        kept = self.kept.get((s, t, "companion"))
        if kept is not None:
            self.version = kept.model_version or self.version  # an episode ended from kept turns only keeps it too
            # Its results row counts the transcript's calls, whichever run made them.
            self.tokens_in += kept.input_tokens or 0
            self.tokens_out += kept.output_tokens or 0
            self.latency += kept.latency_ms or 0.0
            return self._replay(kept)
        lane, ctx = self.lane, self.ctx
        msgs = companion_messages(self.scenario, s, history, earlier=earlier, memory=lane.m.memory)
        budget, est = ctx.budget, cost_bound(lane.stamps.price, msgs, lane.stamps.max_output)
        if budget is not None and not budget.reserve(est):
            return None
        started = datetime.now(timezone.utc)
        try:
            res = await lane.provider.for_dataset(self.ds.id).chat(msgs, call=self.call)
        except ProviderError as e:
            if budget is not None:
                budget.settle(est, None)
            if isinstance(e, Unreachable):
                raise
            await self._store(s, t, "companion", "error", None, started, attempts=e.attempts,
                              error=e, speaker=lane.m.name)
            return self._error_row(e.klass.value, str(e))
        except BaseException:
            if budget is not None:
                budget.settle(est, None)
            raise
        lane.shared.stats.companion_calls += 1
        price = lane.stamps.price
        if budget is not None:
            budget.settle(est, price.cost(res.input_tokens, res.output_tokens) if price is not None else None)
        self.tokens_in += res.input_tokens or 0
        self.tokens_out += res.output_tokens or 0
        self.latency += res.latency_ms
        self.version = res.model_version or self.version
        status = "blocked" if res.blocked else "ok"
        row = await self._store(s, t, "companion", status, res.text if not res.blocked else res.blocked, started,
                                result=res, speaker=lane.m.name, reason=res.blocked)
        return self._replay(row)

    async def seeker_turn(self, s: int, t: int, history: list[Message], earlier: list[tuple[Message, ...]],
                          event: Event | None, probe: Probe | None, *, own: str | None = None,
                          emotion: int | None = None) -> TurnRecord | ResultRow | None:
        """The seeker's message closing exchange t (t = 0: opening the session)."""
        kept = self.kept.get((s, t, "seeker"))
        if kept is not None:
            return self._replay(kept)
        started = datetime.now(timezone.utc)
        if own is not None and event is None and probe is None:  # the source's own words open the session
            row = await self._store(s, t, "seeker", "ok", own, started, emotion=self.scenario.start_emotion,
                                    speaker="scenario")
            return self._replay(row)
        lane = self.lane
        sim = lane.shared.simulator
        msgs = seeker_messages(self.scenario, s, history, event=event, probe=probe,
                               earlier=[list(e) for e in earlier], emotion=emotion)
        turn: SeekerTurn = await sim.ask(msgs, self.seed + 1000 * (1 + s * 100 + t), self.ctx.budget,
                                         conversation=self.conv)
        lane.shared.stats.simulator_calls += max(1, turn.attempts)
        if turn.error is not None:
            if isinstance(turn.error, Unreachable):
                raise turn.error
            await self._store(s, t, "seeker", "error", None, started, attempts=turn.attempts, error=turn.error,
                              speaker=sim.name)
            return self._error_row("simulator", f"user simulator: {turn.error}")
        reply, res = turn.reply, turn.result
        assert res is not None
        if reply is None:
            await self._store(s, t, "seeker", "unreadable", res.text, started, result=res, attempts=turn.attempts,
                              speaker=sim.name, reason=res.blocked)
            return self._error_row("simulator", f"the user simulator's reply could not be read after "
                                                f"{turn.attempts} call(s): {res.text[:200]!r}")
        row = await self._store(s, t, "seeker", "ok", reply.reply, started, result=res, attempts=turn.attempts,
                                emotion=reply.emotion, reason=reply.reason, ended=reply.end, speaker=sim.name)
        return self._replay(row)

    # ------------------------------------------------------------ rows

    def _replay(self, row: TurnRow) -> TurnRecord:
        rec = TurnRecord(row.session, row.turn, row.role, row.content or "", emotion=row.emotion,
                         reason=row.reason or "", end=bool(row.ended))
        self.records.append(rec)
        if row.status == "blocked":
            return TurnRecord(row.session, row.turn, "blocked", "", reason=row.reason or "blocked")
        return rec

    async def _store(self, s: int, t: int, role: str, status: str, content: str | None, started: datetime, *,
                     speaker: str, result: ChatResult | None = None, attempts: int | None = None,
                     error: ProviderError | None = None, emotion: int | None = None, reason: str | None = None,
                     ended: bool | None = None) -> TurnRow:
        lane, w = self.lane, self.w
        companion = role == "companion"
        row = TurnRow(
            model=lane.m.name, dataset=self.ds.id, item_id=w.item.id, sample=w.sample, session=s, turn=t, role=role,
            status=status, content=content, emotion=emotion, reason=reason, ended=ended,
            error_class=error.klass.value if error is not None else None,
            error=str(error)[:1000] if error is not None else None,
            attempts=attempts if attempts is not None else (result.attempts if result is not None else 0),
            input_tokens=result.input_tokens if result is not None else None,
            output_tokens=result.output_tokens if result is not None else None,
            latency_ms=result.latency_ms if result is not None else None, speaker=speaker,
            model_version=result.model_version if result is not None else None,
            prompt_hash=lane.stamps.prompt_hash[self.ds.id] if companion else f"seeker-{SEEKER_PROMPT_VERSION}",
            identity=lane.stamps.identity.get(self.ds.id) if companion else lane.shared.sim_identity,
            run_id=lane.stamps.run_id, started_at=started, finished_at=datetime.now(timezone.utc))
        writer, journal = lane.shared.turns, lane.shared.journal
        # Kept before the next call: a kill at any moment asks again only the calls then in flight.
        if journal is not None:
            journal.append(row)
        await writer.put(row)
        self.last_put = writer.rows_put
        lane.shared.stats.turns[status] += 1
        if journal is None:
            await writer.stored(self.last_put)
        return row

    def finish(self, end: str, *, blocked: str | None = None) -> ResultRow:
        self.lane.shared.stats.episodes[end] += 1
        text = msgspec.json.encode(Transcript(tuple(self.records), end)).decode()
        res = ChatResult(text=text, model_version=self.version, input_tokens=self.tokens_in,
                         output_tokens=self.tokens_out, finish_reason=end, latency_ms=self.latency, blocked=blocked)
        return build_row(self.lane.m.name, self.w, self.lane.stamps, self.started, res)

    def _error_row(self, error_class: str, message: str) -> ResultRow:
        """The episode stopped on a failed call: an error row (not scored; the next run continues it)."""
        self.lane.shared.stats.episodes["error"] += 1
        now = datetime.now(timezone.utc)
        row = build_row(self.lane.m.name, self.w, self.lane.stamps, self.started,
                        ChatResult(text="", finish_reason="error"))
        return msgspec.structs.replace(row, status="error", error_class=error_class, error=message[:1000],
                                       response=None, prediction=None, score=None, measures=None, finished_at=now)


def _at(items: tuple[Any, ...], turn: int) -> Any:
    return next((x for x in items if x.turn == turn), None)


def start_episodes(ctx: RunContext, cfg: ModelConfig, planned: list[Any], sim_identity: str | None) -> Shared:
    """The simulator and the turns' Writer for a run with interactive datasets, registered with the context
    (the writer runs beside the main one and is flushed before it; the simulator is closed with the run)."""
    from store.results.turns import KEY, insert_turns, journal_path

    seeker_tokens = max((p.dataset.seeker_max_tokens for p in planned), default=300)
    sim = Simulator(cfg, ctx.limits.get(cfg.name), ctx.breakers.get(cfg.name), max_tokens=seeker_tokens)
    # The journal keeps each turn before the episode's next call; the table gets them in batches, in a
    # short window (an episode's results row waits for its turns in the table).
    writer = Writer(ctx.con.cursor(), insert=insert_turns, table="turns", key=KEY, flush_s=0.05)
    ctx.add_writer(writer)
    found = ctx.con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    db = found[0] if found else None
    journal = TurnJournal(journal_path(db)) if db and db != ":memory:" else None

    async def close() -> None:
        await sim.aclose()
        await writer.close()
        await writer.finished.wait()
        if journal is not None:  # kept where the table may lack a row: the next open replays it
            journal.close(remove=writer.rows_written == writer.rows_put)

    ctx.on_close(close)
    return Shared(simulator=sim, turns=writer, stats=EpisodeStats(), sim_identity=sim_identity, journal=journal)
