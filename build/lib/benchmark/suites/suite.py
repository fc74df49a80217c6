"""Suites as data: a TOML file declares the FDAEF hierarchy, weights and sampling.

ability -> sub-ability -> task (level L/M/H) -> dataset -> method, a weight on
every edge, the difficulty-weight table, the gate ability and its threshold.
The format is documented in docs/suites.md. ``load_suite`` validates the whole
file and raises ``SuiteError`` with one line naming the file and the path of
the offending node; the sweep relies on ``name``, ``version``, ``sample_size``,
``seed`` and ``datasets``.
"""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from benchmark.errors import UserError

SUITES_DIR = Path(__file__).parent  # the TOML files beside this module
LEVELS = ("L", "M", "H")
NORMALIZATIONS = ("ratio", "raw", "numeric", "grade")
MISSING_LEVELS = ("table", "renormalize")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")

# The MoodBench 1.0 paper, Algorithm 4: difficulty weights by the set of levels present.
DEFAULT_DIFFICULTY: dict[str, dict[str, float]] = {
    "LMH": {"L": 0.3, "M": 0.55, "H": 0.15},
    "LM": {"L": 0.4, "M": 0.6},
    "LH": {"L": 0.6, "H": 0.4},
    "MH": {"M": 0.7, "H": 0.3},
    "L": {"L": 1.0},
    "M": {"M": 1.0},
    "H": {"H": 1.0},
}


class SuiteError(UserError):
    pass


class Method(msgspec.Struct, frozen=True):
    """How one metric of a dataset becomes a 0-100 score (Algorithm 2)."""

    id: str  # the metric name, or "primary"
    metric: str | None  # None: the dataset's primary metric in dataset_metrics
    normalization: str = "ratio"  # ratio | raw | numeric | grade
    min: float | None = None  # numeric only
    max: float | None = None
    grades: tuple[tuple[str, float], ...] = ()  # grade only: (label, points)
    weight: float = 1.0


class DatasetSpec(msgspec.Struct, frozen=True):
    id: str
    name: str
    methods: tuple[Method, ...]  # never empty: the default method is filled in
    turns: int | None = None  # an interactive dataset's exchanges per session (None: its own default)
    samples: int | None = None  # interactive datasets: plays per scenario (None: the dataset's own)


class DatasetRef(msgspec.Struct, frozen=True):
    id: str
    weight: float = 1.0


class Task(msgspec.Struct, frozen=True):
    id: str
    name: str
    level: str
    datasets: tuple[DatasetRef, ...]
    weight: float = 1.0


class SubAbility(msgspec.Struct, frozen=True):
    id: str
    name: str
    tasks: tuple[Task, ...]
    weight: float = 1.0


class Ability(msgspec.Struct, frozen=True):
    id: str
    name: str
    sub_abilities: tuple[SubAbility, ...]
    weight: float | None = 1.0  # None for the gate ability: it never enters the total
    group: str = ""  # display only, e.g. "Core" (MoodBench 1.0 paper, Table 4)


class LevelWeight(msgspec.Struct, frozen=True):
    levels: str  # the set of levels present, e.g. "LM"
    level: str
    weight: float


class Suite(msgspec.Struct, frozen=True):
    name: str
    version: str
    sample_size: int
    seed: int
    datasets: tuple[str, ...]  # every dataset id the suite uses, in file order
    title: str = ""
    gate: str | None = None  # id of the gate ability (Algorithm 5), None: no veto
    tau: float | None = None
    missing_levels: str = "table"  # see docs/suites.md
    difficulty: tuple[LevelWeight, ...] = ()
    abilities: tuple[Ability, ...] = ()
    dataset_specs: tuple[DatasetSpec, ...] = ()
    source: str = ""

    def tasks(self) -> list[tuple[Ability, SubAbility, Task]]:
        return [(a, s, t) for a in self.abilities for s in a.sub_abilities for t in s.tasks]

    def spec(self, dataset_id: str) -> DatasetSpec | None:
        return next((d for d in self.dataset_specs if d.id == dataset_id), None)


def resolve(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml":
        if not p.is_file():
            raise SuiteError(f"suite file {p} does not exist")
        return p
    p = SUITES_DIR / f"{name_or_path}.toml"
    if not p.is_file():
        known = ", ".join(sorted(f.stem for f in SUITES_DIR.glob("*.toml")))
        raise SuiteError(f"unknown suite {name_or_path!r} (known: {known})")
    return p


def load_suite(name_or_path: str) -> Suite:
    path = resolve(name_or_path)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{path}: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SuiteError(f"{path}: cannot read: {e}") from None
    return parse_suite(doc, path)


def parse_suite(doc: dict[str, Any], path: Path | str = "<suite>") -> Suite:
    """Validate a parsed TOML document and build the Suite."""
    return _Parser(str(path)).suite(doc)


class _Parser:
    def __init__(self, file: str) -> None:
        self.file = file
        self.ids: dict[str, str] = {}  # node id -> path where it was defined

    def fail(self, where: str, msg: str) -> SuiteError:
        return SuiteError(f"{self.file}: {where}: {msg}")

    def keys(self, where: str, table: Any, allowed: set[str]) -> dict[str, Any]:
        if not isinstance(table, dict):
            raise self.fail(where, f"expected a table, got {type(table).__name__}")
        extra = sorted(set(table) - allowed)
        if extra:
            raise self.fail(where, f"unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")
        return table

    def weight(self, where: str, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise self.fail(where, f"weight must be a number > 0, got {v!r}")
        return float(v)

    def number(self, where: str, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.fail(where, f"expected a number, got {v!r}")
        return float(v)

    def text(self, where: str, v: Any) -> str:
        if not isinstance(v, str):
            raise self.fail(where, f"expected a string, got {v!r}")
        return v

    def node_id(self, where: str, table: dict[str, Any]) -> str:
        v = table.get("id")
        if not isinstance(v, str) or not _ID.match(v):
            raise self.fail(where, f"missing or invalid id {v!r} (letters, digits, _ . -)")
        # Ids are unique across layers: the views and the drill-down key nodes by
        # id alone, and a node reused elsewhere would make the tree a graph.
        if v in self.ids:
            raise self.fail(where, f"id {v!r} already used at {self.ids[v]}")
        self.ids[v] = where
        return v

    def children(self, where: str, table: dict[str, Any], key: str, header: str) -> list[Any]:
        kids = table.get(key)
        if not isinstance(kids, list) or not kids:
            raise self.fail(where, f"needs at least one [[{header}]] entry")
        return kids

    def suite(self, doc: dict[str, Any]) -> Suite:
        self.keys("top level", doc, {"suite", "scoring", "ability", "datasets"})
        meta = self.keys("[suite]", doc.get("suite", {}), {"name", "version", "title", "sample_size", "seed"})
        name = self.text("[suite].name", meta.get("name", Path(self.file).stem))
        if not _ID.match(name) or "@" in name:
            raise self.fail("[suite].name", f"invalid suite name {name!r}")
        sample_size, seed = meta.get("sample_size", 300), meta.get("seed", 20250826)
        for k, v in (("sample_size", sample_size), ("seed", seed)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise self.fail(f"[suite].{k}", f"expected a non-negative integer, got {v!r}")
        decl = self.declared_datasets(doc.get("datasets"))
        top = self.children("top level", doc, "ability", "ability")
        abilities = tuple(self.ability(f"ability[{i}]", a, decl) for i, a in enumerate(top))
        gate, tau, missing, difficulty = self.scoring(doc.get("scoring", {}), abilities)
        # A main ability without a weight weighs 1; the gate keeps None.
        abilities = tuple(
            msgspec.structs.replace(a, weight=1.0) if a.id != gate and a.weight is None else a for a in abilities
        )
        used = {r.id for a in abilities for s in a.sub_abilities for t in s.tasks for r in t.datasets}
        for ds_id in decl:
            if ds_id not in used:
                raise self.fail(f"[datasets].{ds_id}", "declared but used by no task")
        return Suite(
            name=name,
            version=str(meta.get("version", "0")),
            sample_size=sample_size,
            seed=seed,
            datasets=tuple(decl),
            title=self.text("[suite].title", meta.get("title", name)),
            gate=gate,
            tau=tau,
            missing_levels=missing,
            difficulty=difficulty,
            abilities=abilities,
            dataset_specs=tuple(decl.values()),
            source=self.file,
        )

    def declared_datasets(self, table: Any) -> dict[str, DatasetSpec]:
        if isinstance(table, list):
            raise self.fail("[[datasets]]", 'datasets are declared as a table: [datasets] then id = "Name" lines')
        if not isinstance(table, dict) or not table:
            raise self.fail("[datasets]", "missing: declare every dataset id the tasks use")
        out = {}
        for ds_id, body in table.items():
            where = f"[datasets].{ds_id}"
            if not _ID.match(ds_id):
                raise self.fail(where, f"invalid dataset id {ds_id!r}")
            if isinstance(body, str):  # shorthand: id = "Display name"
                body = {"name": body}
            body = self.keys(where, body, {"name", "methods", "turns", "samples"})
            turns = self.count(where, body, "turns", "exchanges per session")
            samples = self.count(where, body, "samples", "plays per scenario")
            methods = body.get("methods", [{}])  # default: primary metric, ratio
            if not isinstance(methods, list) or not methods:
                raise self.fail(f"{where}.methods", "expected a non-empty array of tables")
            ms = [self.method(f"{where}.methods[{i}]", m) for i, m in enumerate(methods)]
            seen: set[str] = set()
            for i, m in enumerate(ms):
                if m.id in seen:
                    raise self.fail(f"{where}.methods[{i}]", f"metric {m.id!r} listed twice")
                seen.add(m.id)
            name = self.text(f"{where}.name", body.get("name", ds_id))
            out[ds_id] = DatasetSpec(ds_id, name, tuple(ms), turns=turns, samples=samples)
        return out

    def count(self, where: str, body: dict[str, Any], key: str, what: str) -> int | None:
        """An optional positive integer of a dataset's table (`turns`, `samples`)."""
        value = body.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise self.fail(f"{where}.{key}", f"expected an integer >= 1 ({what}), got {value!r}")
        return value

    def method(self, where: str, m: Any) -> Method:
        m = self.keys(where, m, {"metric", "normalization", "min", "max", "grades", "weight"})
        metric = m.get("metric")
        if metric is not None and (not isinstance(metric, str) or not _ID.match(metric)):
            raise self.fail(where, f"invalid metric name {metric!r}")
        norm = m.get("normalization", "ratio")
        if norm not in NORMALIZATIONS:
            raise self.fail(where, f"normalization {norm!r} is not one of {', '.join(NORMALIZATIONS)}")
        lo = hi = None
        grades: tuple[tuple[str, float], ...] = ()
        if norm == "numeric":
            if "min" not in m or "max" not in m:
                raise self.fail(where, "numeric normalization needs min and max")
            lo, hi = self.number(f"{where}.min", m["min"]), self.number(f"{where}.max", m["max"])
            if hi <= lo:
                raise self.fail(where, f"max ({hi}) must be greater than min ({lo})")
        elif "min" in m or "max" in m:
            raise self.fail(where, f"min/max only apply to numeric normalization, not {norm}")
        if norm == "grade":
            table = m.get("grades")
            if not isinstance(table, dict) or not table:
                raise self.fail(where, "grade normalization needs a grades table, e.g. { Excellent = 95 }")
            for label, pts in table.items():
                p = self.number(f"{where}.grades.{label}", pts)
                if not 0 <= p <= 100:
                    raise self.fail(f"{where}.grades.{label}", f"points must be within 0-100, got {p}")
                grades += ((label, p),)
        elif "grades" in m:
            raise self.fail(where, f"grades only apply to grade normalization, not {norm}")
        w = self.weight(f"{where}.weight", m.get("weight", 1))
        return Method(metric or "primary", metric, norm, lo, hi, grades, w)

    def ability(self, where: str, a: Any, decl: dict[str, DatasetSpec]) -> Ability:
        a = self.keys(where, a, {"id", "name", "group", "weight", "sub_ability"})
        aid = self.node_id(where, a)
        where = f"ability[{aid}]"
        subs = tuple(
            self.sub_ability(f"{where}.sub_ability[{i}]", s, decl)
            for i, s in enumerate(self.children(where, a, "sub_ability", "ability.sub_ability"))
        )
        w = self.weight(f"{where}.weight", a["weight"]) if "weight" in a else None
        return Ability(
            aid,
            self.text(f"{where}.name", a.get("name", aid)),
            subs,
            w,
            self.text(f"{where}.group", a.get("group", "")),
        )

    def sub_ability(self, where: str, s: Any, decl: dict[str, DatasetSpec]) -> SubAbility:
        s = self.keys(where, s, {"id", "name", "weight", "task"})
        sid = self.node_id(where, s)
        where = f"{where.rsplit('.', 1)[0]}.sub_ability[{sid}]"
        kids = self.children(where, s, "task", "ability.sub_ability.task")
        tasks = tuple(self.task(f"{where}.task[{i}]", t, decl) for i, t in enumerate(kids))
        return SubAbility(
            sid,
            self.text(f"{where}.name", s.get("name", sid)),
            tasks,
            self.weight(f"{where}.weight", s.get("weight", 1)),
        )

    def task(self, where: str, t: Any, decl: dict[str, DatasetSpec]) -> Task:
        t = self.keys(where, t, {"id", "name", "level", "weight", "datasets"})
        tid = self.node_id(where, t)
        where = f"{where.rsplit('.', 1)[0]}.task[{tid}]"
        level = t.get("level")
        if level not in LEVELS:
            raise self.fail(f"{where}.level", f"level {level!r} is not one of L, M, H")
        raw = t.get("datasets")
        if not isinstance(raw, list) or not raw:
            raise self.fail(f"{where}.datasets", "expected a non-empty array of dataset ids")
        refs: list[DatasetRef] = []
        for i, r in enumerate(raw):
            rw = f"{where}.datasets[{i}]"
            if isinstance(r, str):
                r = {"id": r}
            r = self.keys(rw, r, {"id", "weight"})
            ds = r.get("id")
            if ds not in decl:
                raise self.fail(rw, f"undefined dataset {ds!r} (not declared in [datasets])")
            if any(x.id == ds for x in refs):
                raise self.fail(rw, f"dataset {ds!r} listed twice under one task")
            refs.append(DatasetRef(ds, self.weight(f"{rw}.weight", r.get("weight", 1))))
        return Task(
            tid,
            self.text(f"{where}.name", t.get("name", tid)),
            level,
            tuple(refs),
            self.weight(f"{where}.weight", t.get("weight", 1)),
        )

    def scoring(
        self, table: Any, abilities: tuple[Ability, ...]
    ) -> tuple[str | None, float | None, str, tuple[LevelWeight, ...]]:
        s = self.keys("[scoring]", table, {"gate", "tau", "missing_levels", "difficulty"})
        gate, tau = s.get("gate"), s.get("tau")
        ids = [a.id for a in abilities]
        if gate is not None:
            if gate not in ids:
                raise self.fail("[scoring].gate", f"gate {gate!r} is not an ability (abilities: {', '.join(ids)})")
            if tau is None:
                raise self.fail("[scoring]", "a gate needs a threshold tau")
            tau = self.number("[scoring].tau", tau)
            g = next(a for a in abilities if a.id == gate)
            if g.weight is not None:
                # Algorithm 5 leaves the gate out of the weighted total.
                raise self.fail(f"ability[{gate}].weight", "the gate ability never enters the total: remove its weight")
            if len(abilities) < 2:
                raise self.fail("[scoring].gate", "a gate needs at least one other ability to score")
        elif tau is not None:
            raise self.fail("[scoring].tau", "tau without a gate ability")
        missing = s.get("missing_levels", "table")
        if missing not in MISSING_LEVELS:
            raise self.fail("[scoring].missing_levels", f"{missing!r} is not one of {', '.join(MISSING_LEVELS)}")
        table_ = {k: dict(v) for k, v in DEFAULT_DIFFICULTY.items()}
        diff = self.keys("[scoring.difficulty]", s.get("difficulty", {}), set(DEFAULT_DIFFICULTY))
        for key, row in diff.items():
            where = f"[scoring.difficulty].{key}"
            row = self.keys(where, row, set(key))
            if set(row) != set(key):
                raise self.fail(where, f"needs a weight for each of {', '.join(key)}")
            ws = {lv: self.weight(f"{where}.{lv}", w) for lv, w in row.items()}
            if abs(sum(ws.values()) - 1) > 1e-9:
                raise self.fail(where, f"weights must sum to 1, got {sum(ws.values())}")
            table_[key] = ws
        diff_rows = tuple(LevelWeight(k, lv, w) for k, row in table_.items() for lv, w in row.items())
        return gate, tau, missing, diff_rows
