"""Scoring speed per dataset: how many (item, answer) pairs `score` reads per second.

    .venv/bin/python -m bench.scoring_bench                 # every registered dataset with data
    .venv/bin/python -m bench.scoring_bench --datasets sst2,agieval --data-dir /path/to/datasets
    .venv/bin/python -m bench.scoring_bench --long          # only the long single-line answers

Each dataset's seeded sample of 200 items (its fixture under tests/benchmark/fixtures when it has
one, else --data-dir) is scored against five answers (a code, a Chinese answer line, a sentence,
a bare letter, a refusal), after a warm-up pass. Prints items/s per dataset, slowest first. The
engine scores in its lanes, so a dataset far below a few thousand per second slows a sweep.

Then the time to read one very long single-line answer (64 KB, 1 MB, 10 MB of a repeated English
or Chinese answer sentence) with extract_single and extract_multi: one such answer must not stall
a sweep (docs/extraction.md, "Long answers").
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from benchmark import registry
from benchmark.dataset import DataMissing
from benchmark.extract.choice import Choices, extract_multi, extract_single
from benchmark.sampling import seeded_sample

ANSWERS = ["Answer: B", "答案：A", "I think the answer is (A) because of the passage.", "B", "no idea"]
LONG_SENTENCES = {"English": "The answer is A. ", "Chinese": "答案是A。因为苹果最好。"}
LONG_SIZES = {"64 KB": 64 << 10, "1 MB": 1 << 20, "10 MB": 10 << 20}
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "benchmark" / "fixtures"


def rate(dataset_id: str, data_dir: Path, n: int = 200) -> float | None:
    ds = registry.get(dataset_id)
    assert ds is not None
    root = FIXTURES if (FIXTURES / dataset_id).is_dir() else data_dir
    try:
        items = [ds.render(i, raw) for i, raw in seeded_sample(ds.records(root), ds.id, n)]
    except DataMissing:
        return None
    work = [(item, a) for item in items for a in ANSWERS]
    for item, a in work:  # warm-up: option lookups are cached per item
        ds.score(item, a)
    start = time.perf_counter()
    for item, a in work:
        ds.score(item, a)
    return len(work) / (time.perf_counter() - start)


def long_lines() -> None:
    """Print the seconds one long single-line answer takes to read, single and pick-several."""
    choices = Choices(["apple", "banana", "cherry", "date"])
    for language, sentence in LONG_SENTENCES.items():
        for label, size in LONG_SIZES.items():
            text = sentence * (size // len(sentence.encode()))
            times = []
            for read in (extract_single, extract_multi):
                start = time.perf_counter()
                read(text, choices)
                times.append(time.perf_counter() - start)
            print(f"long line {language:8s} {label:>6s}: single {times[0]:6.2f} s, pick-several {times[1]:6.2f} s")


def main() -> None:
    default = Path(os.environ.get("ENGINE_SHARED_DIR", "../shared")) / "datasets"
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", help="comma-separated ids (default: all)")
    ap.add_argument("--data-dir", type=Path, default=default)
    ap.add_argument("--long", action="store_true", help="only the long single-line answers")
    args = ap.parse_args()
    if args.long:
        long_lines()
        return
    ids = args.datasets.split(",") if args.datasets else registry.all_ids()
    rates = {i: rate(i, args.data_dir) for i in ids}
    for i, r in sorted(rates.items(), key=lambda kv: (kv[1] is None, kv[1] or 0)):
        print(f"{i:32s} " + ("no data" if r is None else f"{r:10,.0f} scores/s"))
    long_lines()


if __name__ == "__main__":
    main()
