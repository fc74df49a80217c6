"""A sweep's plan, made before anything is called: the flags over the models file's [sweep] table, the
suite, and each dataset's seeded sample (a smaller --limit is a prefix of a larger one)."""

from __future__ import annotations

import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import msgspec

from benchmark import registry
from benchmark.cache import cached_sample
from benchmark.dataset import DataMissing, Dataset, stable_hash
from benchmark.sampling import seeded_sample
from benchmark.suites.suite import Suite, load_suite
from engine.config.load import load_models
from engine.config.models import ModelsFile, SweepDefaults
from benchmark.errors import UserError
from engine.lanes.work import PlannedDataset
from engine.run.progress import log


class SweepOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Flags of `sweep`. None = not given: the models file's [sweep] table, then the default, applies."""

    models_path: Path
    db: Path | None = None
    data_dir: Path | None = None
    suite: str | None = None
    datasets: list[str] | None = None
    limit: int | None = None
    pull: bool = False
    fresh: bool = False
    quiet: bool = False
    allow_mixed: bool = False
    budget_usd: float | None = None  # stop dispatching new items once this much is spent
    serve_port: int | None = None  # serve the live view (engine/report/serve.py) on this loopback port
    fraction: float | None = None  # ask this seeded share of every dataset's sample: the prefix a full sweep extends
    until_stable: bool = False  # ask in rounds until the rank is settled (engine/sweep/until_stable.py)
    turns: int | None = None  # exchanges per session of interactive datasets (their own default otherwise)


class SweepPlan(msgspec.Struct):
    opts: SweepOptions  # with the file's [sweep] defaults filled in
    cfg: ModelsFile
    suite: Suite
    planned: list[PlannedDataset]


def plan_sweep(opts: SweepOptions, *, check_env: bool = True) -> SweepPlan:
    """Load the models file, the suite and each dataset's sample; nothing is called."""
    cfg = load_models(opts.models_path, check_env=check_env)
    if opts.datasets is not None and not opts.datasets:
        raise UserError("--datasets is empty: name at least one dataset id (leave the flag out for the whole suite)")
    if opts.datasets is None and cfg.sweep.datasets is not None and not cfg.sweep.datasets:
        raise UserError(f"{opts.models_path}: [sweep] datasets is empty: name at least one dataset id "
                        "(leave the key out for the whole suite)")
    check_shares(opts)
    opts = with_file_defaults(opts, cfg.sweep)
    assert opts.suite is not None and opts.data_dir is not None  # with_file_defaults fills them
    suite = load_suite(opts.suite)
    datasets, skipped = resolve_datasets(opts.datasets, suite.datasets)
    if skipped:
        log(f"note: {len(skipped)} dataset(s) of suite {suite.name} have no adapter yet and are skipped: "
            f"{', '.join(skipped)}", quiet=opts.quiet)
    if not datasets:
        raise UserError(f"suite {suite.name}: none of its datasets can be evaluated yet")
    datasets = interactive_settings(datasets, cfg, opts, suite)
    datasets = suite_samples(datasets, suite)
    if opts.limit is not None and opts.limit < 1:
        raise UserError("--limit must be >= 1")
    if opts.budget_usd is not None and opts.budget_usd <= 0:
        raise UserError("--budget must be > 0 (US dollars)")
    limit = opts.limit or suite.sample_size
    if opts.pull:
        pull_data([ds.id for ds in datasets], opts.data_dir, quiet=opts.quiet)
    # Data problems surface here, before any model is called.
    planned = [load_dataset(ds, opts.data_dir, limit, suite.seed) for ds in datasets]
    if opts.fraction is not None:
        planned = [PlannedDataset(p.dataset, p.records[:share_of(len(p.records), opts.fraction)]) for p in planned]
    return SweepPlan(opts, cfg, suite, planned)


def interactive_settings(datasets: list[Dataset], cfg: ModelsFile, opts: SweepOptions,
                         suite: Suite | None = None) -> list[Dataset]:
    """Turns per session of the interactive datasets: --turns, else the suite's `turns`, else the dataset's
    own default; a [user_simulator] required when one is planned."""
    from benchmark.episodes.dataset import EpisodeDataset

    episodic = [ds for ds in datasets if isinstance(ds, EpisodeDataset)]
    datasets = list(datasets)
    for n, ds in enumerate(datasets):
        spec = suite.spec(ds.id) if suite is not None else None
        if suite is None or spec is None or spec.turns is None:
            continue
        if not isinstance(ds, EpisodeDataset):
            raise UserError(f"{suite.source}: [datasets].{ds.id}.turns: {ds.id} is not an interactive dataset "
                            "(turns are the exchanges per session of a dialogue)")
        datasets[n] = ds.with_turns(spec.turns)
    if opts.turns is not None:
        if opts.turns < 1:
            raise UserError("--turns must be >= 1 (exchanges per session of an interactive dataset)")
        if not episodic:
            log("note: --turns applies to interactive datasets only, and none is planned", quiet=opts.quiet)
        datasets = [ds.with_turns(opts.turns) if isinstance(ds, EpisodeDataset) else ds for ds in datasets]
    if episodic:
        sim = cfg.user_simulator
        why = (f"no [user_simulator] table in {opts.models_path}" if sim is None else sim.missing_key())
        if why:
            raise UserError(f"{why}: the interactive dataset(s) {', '.join(d.id for d in episodic)} need a model "
                            "playing the help-seeker (docs/interactive.md); leave them out with --datasets")
    return datasets


def suite_samples(datasets: list[Dataset], suite: Suite) -> list[Dataset]:
    """The suite's `samples = k` (plays per scenario) applied to its interactive datasets."""
    from benchmark.episodes.dataset import EpisodeDataset

    plays = {s.id: s.samples for s in suite.dataset_specs if s.samples is not None}
    for ds in datasets:
        if ds.id in plays and not isinstance(ds, EpisodeDataset):
            raise UserError(f"{suite.source}: [datasets].{ds.id}: samples applies to interactive datasets only")
    return [ds.with_samples(plays[ds.id]) if isinstance(ds, EpisodeDataset) and ds.id in plays else ds
            for ds in datasets]


def check_shares(opts: SweepOptions) -> None:
    """--fraction and --until-stable: each within the sample --limit (or the models file) sets, not both."""
    f = opts.fraction
    if f is not None and not 0 < f <= 1:  # also NaN
        raise UserError(f"--fraction must be > 0 and at most 1 (the share of every dataset's sample), got {f:g}")
    if f is not None and opts.until_stable:
        raise UserError("--fraction and --until-stable do not go together: --until-stable chooses how much of "
                        "each dataset to ask")
    if opts.limit is not None and (f is not None or opts.until_stable):
        flag = "--fraction" if f is not None else "--until-stable"
        raise UserError(f"--limit and {flag} do not go together: {flag} asks a share of the suite's sample (its "
                        "size: the models file's [sweep] limit, else the suite's sample_size)")


def share_of(size: int, fraction: float) -> int:
    """Items of a sample of `size` that --fraction asks: rounded up, so every dataset gets at least one."""
    return min(size, math.ceil(fraction * size - 1e-9))


def with_file_defaults(opts: SweepOptions, file: SweepDefaults) -> SweepOptions:
    """Command-line flag, else the models file's [sweep] value, else the built-in default."""
    def pick(flag: Any, value: Any, default: Any) -> Any:
        return flag if flag is not None else value if value is not None else default

    return msgspec.structs.replace(
        opts,
        db=Path(pick(opts.db, file.db, "results.duckdb")),
        data_dir=Path(pick(opts.data_dir, file.data_dir, "data")),
        suite=pick(opts.suite, file.suite, "moodbench"),
        datasets=pick(opts.datasets, file.datasets, None),
        limit=pick(opts.limit, file.limit, None),
        pull=opts.pull or file.pull,
    )


def pull_data(dataset_ids: list[str], data_dir: Path, *, quiet: bool) -> None:
    """`data pull` for these datasets; files already present and verified are not fetched again."""
    from engine.data.pull import DataOptions, pull  # only with --pull (it imports rich)

    if pull(DataOptions(datasets=",".join(dataset_ids), data_dir=data_dir, quiet=quiet)) != 0:
        raise UserError(f"could not fetch the data for {', '.join(dataset_ids)} into {data_dir} (see above)")


def resolve_datasets(requested: list[str] | None, suite_ids: tuple[str, ...]) -> tuple[list[Dataset], list[str]]:
    """Adapters for the requested ids (or the suite's); returns (datasets, suite ids skipped)."""
    if requested:
        unknown = [d for d in requested if registry.get(d) is None]
        if unknown:
            raise UserError(
                f"unknown dataset id(s): {', '.join(unknown)} (known: {', '.join(registry.all_ids())})"
            )
        return [registry.get(d) for d in requested], []  # type: ignore[misc]
    found = [registry.get(d) for d in suite_ids]
    skipped = [d for d, ds in zip(suite_ids, found) if ds is None]
    return [ds for ds in found if ds is not None], skipped


@contextmanager
def reading_data(ds: Dataset, data_dir: Path) -> Iterator[None]:
    """Missing or unreadable data files inside the block: a UserError naming the dataset and folder."""
    try:
        yield
    except DataMissing as e:
        raise UserError(f"dataset {ds.id}: {e} (fetch it with: python -m engine data pull --datasets {ds.id} --data-dir {data_dir})") from None
    except (OSError, ValueError) as e:
        raise UserError(f"dataset {ds.id}: cannot read its data under {data_dir}: {e}") from None


def load_dataset(ds: Dataset, data_dir: Path, limit: int | None, seed: int) -> PlannedDataset:
    def make() -> list[tuple[str, Any]]:
        return seeded_sample(ds.records(data_dir), ds.id, limit, seed)

    with reading_data(ds, data_dir):
        # Only a registered declaration as it is: one changed at run time (--turns) is not what its source says.
        chosen = cached_sample(ds, data_dir, limit, seed, make) if registry.get(ds.id) is ds else make()
    if not chosen:
        raise UserError(f"dataset {ds.id}: no items found under {data_dir}")
    return PlannedDataset(dataset=ds, records=tuple(chosen))


def run_stamp(ds: Dataset, generation: dict) -> str:
    """The prompt stamp of a row: the dataset's template and the generation settings used."""
    return stable_hash(ds.prompt_hash(), sorted(generation.items()), length=12)
