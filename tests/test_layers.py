"""The layer rule (docs/architecture.md), read from the code's imports, imports inside functions too.

providers/ and benchmark/ import no other package of the project; store/ imports neither engine/
nor providers/; no import cycle between modules of the four packages. Inside engine/, store/ and
benchmark/, each wing (a folder) and each file on top imports only the wings and files its table
(WINGS, STORE_WINGS, BENCHMARK_WINGS) allows it; nothing imports the command line (engine's entry files
and each command wing's `flags` module) but the command line itself; store/stats/ imports nothing of
the project at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "providers", "benchmark", "store")
FORBIDDEN = {
    "providers": {"engine", "benchmark", "store"},
    "benchmark": {"engine", "providers", "store"},
    "store": {"engine", "providers"},
}

# engine/'s wings and top files -> what of engine/ each may import (besides itself).
WINGS: dict[str, set[str]] = {
    "errors": set(),
    "version": set(),
    "config": {"errors"},
    "run": {"config", "errors", "version"},
    "lanes": {"run", "config", "errors"},
    "compactbench": {"run", "config", "errors", "version"},
    "data": {"run", "errors"},  # run: the shared worker pool
    "report": {"run", "config", "errors", "version"},
    "sweep": {"run", "lanes", "data", "report", "config", "errors", "version"},
    "cluster": {"run", "lanes", "sweep", "config", "errors", "version"},
    # The command line: the shared arguments, each command wing's flags (a wing of its own, `X.flags`, so
    # that nothing else imports them) and the dispatcher. Only the sweep's flags import cluster/, inside the
    # --cluster branch, so a sweep without the flag never imports Ray.
    "flags": set(),
    "sweep.flags": {"flags", "sweep", "report", "cluster", "errors"},
    "report.flags": {"flags", "report"},
    "data.flags": {"flags", "data"},
    "compactbench.flags": {"flags", "compactbench"},
    "cli": {"flags", "sweep.flags", "report.flags", "data.flags", "compactbench.flags", "run", "errors"},
    "__main__": {"cli", "run"},
    "": set(),  # engine/__init__.py
}


_PRIMITIVES = {"transaction", "query", "upsert", "memory"}
# store/'s wings and top files -> what of store/ each may import (besides itself). The cut follows the
# jobs: the results file, the hierarchy over it, estimates, other commands' tables, pure statistics.
STORE_WINGS: dict[str, set[str]] = {
    "transaction": set(),
    "query": set(),
    "upsert": set(),
    "memory": set(),
    "stats": set(),  # and nothing else of the project either (test below)
    "results": _PRIMITIVES,
    "side": _PRIMITIVES | {"results"},
    "estimates": _PRIMITIVES | {"results", "stats"},
    "hierarchy": _PRIMITIVES | {"results", "estimates", "side", "stats"},
    # the entry: opening a file creates every wing's tables and views
    "db": _PRIMITIVES | {"results", "hierarchy", "estimates", "side"},
    "snapshot": _PRIMITIVES | {"db", "hierarchy", "snapshot_apply"},
    "snapshot_apply": set(),  # run as a child process by snapshot: stdlib and duckdb only
    "import_scores": _PRIMITIVES | {"db", "hierarchy", "estimates"},
    "": set(),
}

# benchmark/'s wings and top files -> what of benchmark/ each may import (besides itself).
BENCHMARK_WINGS: dict[str, set[str]] = {
    "errors": set(),
    "names": set(),
    "sampling": set(),
    "metrics": set(),
    "sources": {"errors"},
    "suites": {"errors"},
    "dataset": {"errors", "metrics"},
    "loaders": {"dataset", "errors"},
    "context": {"dataset", "errors"},
    "extract": {"dataset", "errors"},
    "episodes": {"dataset", "errors", "loaders", "metrics", "context"},
    # registry: judges.rubric_for looks a dataset's rubric up (inside the function)
    "adapters": {"dataset", "errors", "loaders", "context", "extract", "metrics", "registry"},
    "datasets": {"dataset", "errors", "loaders", "context", "extract", "metrics", "adapters", "episodes",
                 "registry"},
    "registry": {"dataset", "datasets"},
    "cache": {"dataset", "loaders"},
    "compactbench": {"errors"},
    "": set(),
}

RULES = {"engine": WINGS, "store": STORE_WINGS, "benchmark": BENCHMARK_WINGS}


def wing(module: str, package: str = "engine") -> str | None:
    """The wing (or top file) of a module of `package`: engine.lanes.batch.core -> 'lanes', engine.sweep.flags
    -> 'sweep.flags' (a command's flags belong to the command line); None outside it."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    if package == "engine" and len(parts) == 3 and parts[2] == "flags":
        return f"{parts[1]}.flags"
    return parts[1] if len(parts) > 1 else ""


def wing_violations(edges: dict[str, set[str]], package: str = "engine") -> list[str]:
    """Imports between the package's wings that its table does not allow, as 'module -> target'."""
    rules = RULES[package]
    bad = []
    for module, deps in sorted(edges.items()):
        src = wing(module, package)
        if src is None:
            continue
        for target in sorted(deps):
            dst = wing(target, package)
            if dst is None or dst == src or dst == "":  # a package's __init__ holds nothing
                continue
            if dst not in rules.get(src, set()):
                bad.append(f"{module} -> {target}")
    return bad


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = f.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _targets(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Every dotted name an import statement may refer to (`from a import b` may mean module a.b)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module or ""
    return [target, *(f"{target}.{a.name}" for a in node.names)]


def import_graph(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """(module -> project modules it imports, forbidden imports as 'module -> target')."""
    mods = _modules(root)
    edges: dict[str, set[str]] = {}
    forbidden = []
    for name, path in mods.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(name, path, node):
                if target.split(".")[0] in FORBIDDEN.get(name.split(".")[0], ()):
                    forbidden.append(f"{name} -> {target}")
                while target and target not in mods:  # a name inside a module: the module
                    target = target.rpartition(".")[0]
                if target and target != name:
                    deps.add(target)
        edges[name] = deps
    return edges, forbidden


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start, deps in edges.items():
        if start in index:
            continue
        work = [(start, iter(sorted(deps)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_package_imports_across_its_layer():
    _, forbidden = import_graph(ROOT)
    assert forbidden == []


@pytest.mark.parametrize("package", sorted(RULES))
def test_wings_import_only_what_their_rule_allows(package):
    edges, _ = import_graph(ROOT)
    assert wing_violations(edges, package) == []


@pytest.mark.parametrize("package", sorted(RULES))
def test_every_module_belongs_to_a_known_wing(package):
    edges, _ = import_graph(ROOT)
    unknown = sorted(m for m in edges if wing(m, package) is not None and wing(m, package) not in RULES[package])
    assert unknown == []


def test_store_stats_imports_nothing_of_the_project():
    edges, _ = import_graph(ROOT)
    outside = sorted(f"{m} -> {d}" for m, deps in edges.items() if m.startswith("store.stats")
                     for d in deps if not d.startswith("store.stats"))
    assert outside == []


@pytest.mark.parametrize("package", ["store", "benchmark"])
def test_package_top_holds_at_most_ten_modules(package):
    top = sorted(f.name for f in (ROOT / package).glob("*.py"))
    assert len(top) <= 10, top


def test_engine_top_holds_at_most_eight_files():
    top = sorted(f.name for f in (ROOT / "engine").glob("*.py"))
    assert len(top) <= 8, top


def longest_chain(edges: dict[str, set[str]], prefix: str = "engine") -> list[str]:
    """The longest import chain between modules under `prefix` (the graph has no cycle)."""
    inner = {m: {d for d in deps if d.startswith(prefix) and d != m} for m, deps in edges.items()
             if m.startswith(prefix)}
    memo: dict[str, list[str]] = {}

    def chain(m: str) -> list[str]:
        if m not in memo:
            memo[m] = [m, *max((chain(d) for d in inner.get(m, ())), key=len, default=[])]
        return memo[m]

    return max((chain(m) for m in inner), key=len, default=[])


def test_engine_import_chains_stay_short():
    edges, _ = import_graph(ROOT)
    # 14 levels when engine/ was one flat folder; entry files -> command wing -> lanes -> run -> config.
    assert len(longest_chain(edges)) <= 10, longest_chain(edges)


def test_no_import_cycle_between_modules():
    edges, _ = import_graph(ROOT)
    assert len(edges) > 100  # the walk found the packages
    assert cycles(edges) == []


# The checks must be able to fail: a tree made to break each rule.
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize(("rel", "text", "expected"), [
    ("benchmark/m.py", "from providers.base import ChatResult\n", "benchmark.m -> providers.base"),
    ("providers/m.py", "def f():\n    import store.db\n", "providers.m -> store.db"),
    ("store/m.py", "from engine import plan\n", "store.m -> engine"),
])
def test_a_forbidden_import_is_found(tmp_path, rel, text, expected):
    _, forbidden = import_graph(_tree(tmp_path, {rel: text}))
    assert expected in forbidden


def test_store_may_read_benchmark(tmp_path):
    _, forbidden = import_graph(_tree(tmp_path, {"store/m.py": "from benchmark.dataset import MetricSpec\n"}))
    assert forbidden == []


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    root = _tree(tmp_path, {
        "store/a.py": "from store.b import x\n",
        "store/b.py": "def x():\n    from . import c\n",
        "store/c.py": "from store.a import y\n",
    })
    edges, _ = import_graph(root)
    assert cycles(edges) == [["store.a", "store.b", "store.c"]]


@pytest.mark.parametrize(("rel", "text", "expected"), [
    ("engine/run/m.py", "from engine.lanes.model_lane import ModelLane\n", "engine.run.m -> engine.lanes.model_lane"),
    ("engine/report/m.py", "def f():\n    from engine.sweep import sweep\n", "engine.report.m -> engine.sweep"),
    ("engine/lanes/m.py", "from engine import cli\n", "engine.lanes.m -> engine.cli"),
    ("engine/sweep/m.py", "from engine.sweep.flags import SWEEP\n", "engine.sweep.m -> engine.sweep.flags"),
    ("engine/report/m.py", "def f():\n    from engine.cluster import driver\n", "engine.report.m -> engine.cluster"),
])
def test_an_import_against_the_wing_rule_is_found(tmp_path, rel, text, expected):
    root = _tree(tmp_path, {})
    for d in ("run", "lanes", "report", "sweep", "cluster"):
        (root / "engine" / d).mkdir()
        (root / "engine" / d / "__init__.py").write_text("")
    (root / "engine" / "cli.py").write_text("")
    (root / "engine" / "lanes" / "model_lane.py").write_text("")
    (root / "engine" / "sweep" / "flags.py").write_text("")
    (root / rel).write_text(text)
    edges, _ = import_graph(root)
    assert expected in wing_violations(edges)


@pytest.mark.parametrize(("package", "rel", "text", "expected"), [
    ("store", "store/results/m.py", "from store.hierarchy.views import ensure_views\n",
     "store.results.m -> store.hierarchy.views"),
    ("store", "store/stats/m.py", "def f():\n    from store.results import writer\n", "store.stats.m -> store.results"),
    ("benchmark", "benchmark/extract/m.py", "from benchmark.adapters.mcq import ChoiceDataset\n",
     "benchmark.extract.m -> benchmark.adapters.mcq"),
])
def test_an_import_against_a_store_or_benchmark_wing_rule_is_found(tmp_path, package, rel, text, expected):
    root = _tree(tmp_path, {})
    for d in ("store/results", "store/hierarchy", "store/stats", "benchmark/extract", "benchmark/adapters"):
        (root / d).mkdir()
        (root / d / "__init__.py").write_text("")
    for f in ("store/hierarchy/views.py", "benchmark/adapters/mcq.py"):
        (root / f).write_text("")
    (root / rel).write_text(text)
    edges, _ = import_graph(root)
    assert expected in wing_violations(edges, package)
