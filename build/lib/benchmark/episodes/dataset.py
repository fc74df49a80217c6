"""``EpisodeDataset``: the declarative base of an interactive dataset (its item is an episode).

An adapter declares where its source is, how an item id is built and how one raw record becomes
a ``Scenario``; the engine plays the scenario (engine/lanes/episode.py) as up to ``turns``
exchanges per session, each one call to the companion (the model under test, prompted by
``companion_messages``) and one to the user simulator (``seeker.seeker_messages``).

Seen through the ``Dataset`` seam an episode is one item: ``render`` gives the companion's first
prompt with the scenario in ``gold`` and the episode's settings in ``meta``; ``score`` reads the
finished transcript (``scoring.Transcript``, JSON, the episode's stored ``response``) into the
episode's measures. So the results row, the views, the bootstrap and the reports hold unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import msgspec

from benchmark.dataset import DatasetBase, Derived, Files, Item, Message, MetricSpec, Scored, stable_hash
from benchmark.episodes.rubric import TranscriptRubric
from benchmark.episodes.scenario import Scenario
from benchmark.episodes.scoring import EPISODE_METRICS, SCORING_VERSION, score_transcript

# Bump when companion_messages / render change what unchanged declarations produce.
RENDER_VERSION = "1"

MEMORY_MODES = ("context", "endpoint")

_COMPANION = {
    "en": ("You are a warm, attentive companion. Someone comes to you to talk about how they feel. "
           "Listen, show that you understand, and support them. Reply as in a conversation: a few sentences, "
           "no lists, no headings."),
    "zh": "你是一位温暖、细心的陪伴者。有人来找你倾诉自己的感受。请倾听、表达理解并给予支持。像聊天一样回复：几句话，不要列表，不要标题。",
}
_PERSONA = {"en": "Stay within this role: {persona}", "zh": "请遵守以下设定：{persona}"}
_EARLIER = {"en": "(An earlier conversation with the same person{gap}.)", "zh": "（与同一个人的一次较早的对话{gap}。）"}
_NOW = {"en": "(The conversation now{gap}.)", "zh": "（现在的对话{gap}。）"}


def _lang(language: str) -> str:
    return "zh" if language == "zh" else "en"


def companion_system(scenario: Scenario) -> str:
    lang = _lang(scenario.language)
    text = _COMPANION[lang]
    if scenario.companion_persona:
        text += "\n" + _PERSONA[lang].format(persona=scenario.companion_persona)
    return text


def companion_messages(scenario: Scenario, session: int, history: Sequence[Message], *,
                       earlier: Sequence[Sequence[Message]] = (), memory: str = "context") -> tuple[Message, ...]:
    """The companion's prompt for its next reply in session ``session`` (0-based).

    ``history``: this session so far (role "user" = the seeker, "assistant" = the companion),
    ending with the seeker's message. ``earlier``: earlier sessions' transcripts, sent only when
    ``memory == "context"``; with ``"endpoint"`` the companion system keeps its own memory (the
    engine sends a stable conversation id instead).
    """
    lang = _lang(scenario.language)
    out = [Message("system", companion_system(scenario))]
    if memory == "context" and earlier and session > 0:
        for n, past in enumerate(earlier[:session]):
            gap = scenario.sessions[n].gap if n < len(scenario.sessions) else ""
            out.append(Message("system", _EARLIER[lang].format(gap=f", {gap}" if gap and lang == "en" else gap)))
            out.extend(past)
        gap = scenario.sessions[session].gap if session < len(scenario.sessions) else ""
        out.append(Message("system", _NOW[lang].format(gap=f", {gap}" if gap and lang == "en" else gap)))
    out.extend(history)
    return tuple(out)


class EpisodeSettings(msgspec.Struct, frozen=True):
    """What the engine needs to play an item besides its scenario (``Item.meta["episode"]``)."""

    turns: int  # exchanges per session
    sessions: int
    success_at: int | None  # stop rule: the seeker's emotion reaching this ends the episode (success)
    failure_below: int | None  # ... falling under this ends it (failure)


class EpisodeDataset(DatasetBase, msgspec.Struct, frozen=True, kw_only=True):
    """An interactive dataset, declared as data (docs/interactive.md)."""

    id: str
    language: str  # "en" | "zh"
    files: tuple[Files, ...]  # where the source is, most preferred first (benchmark/loaders.py)
    item_id: str  # template over a raw row (also `_stem`, `_row`)
    to_scenario: Callable[[dict], Scenario]  # raw row -> Scenario (pure)
    turns: int = 8  # exchanges per session; a suite or --turns may change it
    # SAGE's stop rule: emotion reaching 100 = success, under 10 = failure; None disables either.
    success_at: int | None = 100
    failure_below: int | None = 10
    rows: Callable[[Files, Path], Iterator[tuple[int, dict]]] | None = None  # default loaders.read_rows
    records_fn: Callable[[Path], Iterator[tuple[str, Any]]] | None = None  # records made without files
    keep: Callable[[dict], bool] | None = None  # a row filter (e.g. scenarios without a situation)
    max_tokens: int = 256  # the companion's output allowance per reply
    seeker_max_tokens: int = 300  # the simulator's per reply
    samples: int = 1  # plays per scenario (each with its own seed); a suite's `samples = k` may change it
    rubric: TranscriptRubric | None = None  # a [judge] rubric over the finished transcript (benchmark/episodes/rubric.py)
    revision: int = 1  # bump when a hook (to_scenario, rows, keep) changes what is played or scored
    chance_baseline: float | None = None
    majority_baseline: float | None = None

    def __post_init__(self) -> None:
        if self.turns < 1:
            raise ValueError(f"{self.id}: turns must be at least 1")
        if self.samples < 1:
            raise ValueError(f"{self.id}: samples must be at least 1")

    @property
    def derived(self) -> EpisodeDerived:
        return _DERIVED.of(self)

    @property
    def metrics(self) -> tuple[MetricSpec, ...]:
        return EPISODE_METRICS

    @property
    def scorer_version(self) -> str:
        return self.derived.scorer_version

    def prompt_hash(self) -> str:
        return self.derived.prompt_hash

    def with_turns(self, turns: int) -> EpisodeDataset:
        """The same dataset played for ``turns`` exchanges (a suite's or --turns' setting)."""
        return msgspec.structs.replace(self, turns=turns)

    def with_samples(self, samples: int) -> EpisodeDataset:
        """The same dataset with each scenario played ``samples`` times (a suite's ``samples = k``): play p
        has its own seed (engine/lanes/episode.py: episode_seed), its own results and turns rows (sample p),
        and the scores average a scenario's plays (the play kinds of EPISODE_METRICS)."""
        return msgspec.structs.replace(self, samples=samples)

    # ------------------------------------------------------------ Dataset protocol

    def records(self, data_dir: Path) -> Iterator[tuple[str, Any]]:
        if self.records_fn is not None:
            yield from self.records_fn(Path(data_dir))
            return
        from benchmark.loaders import locate, read_rows

        where, _, paths = locate(self.files, Path(data_dir), self.id)
        reader = self.rows or read_rows
        for path in paths:
            for n, row in reader(where, path):
                if self.keep is not None and not self.keep(row):
                    continue
                row["_stem"], row["_row"] = path.stem, n
                try:
                    item_id = self.item_id.format_map(row)
                except (KeyError, IndexError) as e:
                    raise ValueError(f"{path} row {n}: no field {e} to build the item id") from None
                yield item_id, row

    def scenario(self, raw: Any) -> Scenario:
        return self.to_scenario(raw)

    def render(self, item_id: str, raw: Any) -> Item:
        scenario = self.to_scenario(raw)
        first = scenario.sessions[0].opening if scenario.sessions else None
        history = (Message("user", first),) if first else ()
        settings = EpisodeSettings(self.turns, len(scenario.sessions), self.success_at, self.failure_below)
        return Item(id=item_id, messages=companion_messages(scenario, 0, history),
                    gold=msgspec.to_builtins(scenario), meta={"episode": msgspec.to_builtins(settings)})

    def score(self, item: Item, response: str | None, *, finish_reason: str | None = None) -> Scored:
        return score_transcript(scenario_of(item), response)


def scenario_of(item: Item) -> Scenario:
    return msgspec.convert(item.gold, Scenario)


def settings_of(item: Item) -> EpisodeSettings:
    return msgspec.convert(item.meta["episode"], EpisodeSettings)


def is_episode(item: Item) -> bool:
    return "episode" in item.meta


class EpisodeDerived(msgspec.Struct, frozen=True):
    prompt_hash: str
    scorer_version: str


def _derive(d: EpisodeDataset) -> EpisodeDerived:
    prompt = stable_hash("episode", RENDER_VERSION, d.language, _COMPANION, _PERSONA, _EARLIER, _NOW, d.turns,
                         d.success_at, d.failure_below, d.max_tokens, d.seeker_max_tokens, d.revision)
    scoring = stable_hash(EPISODE_METRICS, d.success_at, d.failure_below, length=6)
    return EpisodeDerived(prompt, f"episode-{SCORING_VERSION}.r{d.revision}.{scoring}")


_DERIVED: Derived[EpisodeDataset, EpisodeDerived] = Derived(_derive)
