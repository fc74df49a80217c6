"""`rescore` over 540,000 stored rows (30 models x 60 datasets x 300 items in shape), timed end to end.

    .venv/bin/python -m bench.rescore_bench [--models 30] [--datasets 18] [--items 300] [--data-dir ../shared/datasets]

Builds a database of choice answers on real data (the first N choice datasets whose data is under
--data-dir, 300 seeded items each, every model answering in a different style: "The answer is (B).",
"B", a sentence naming the option, a refusal), stamped with an older scorer version so every row is
read again, then runs `python -m engine rescore DB` in a child process and prints its wall time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

STYLES = ("The answer is ({c}).", "{c}", "After weighing the options, I choose {c}.", "Answer: {c}\n\nBecause ...",
          "I cannot tell.", "最终答案：{c}")


def build(db: Path, data_dir: Path, n_models: int, n_datasets: int, items: int) -> int:
    from benchmark import registry
    from benchmark.adapters.mcq import ChoiceDataset
    from engine.sweep.plan import load_dataset
    from store.db import connect
    from store.results.writer import ResultRow, insert_rows

    con = connect(db)
    now, n, used = datetime.now(UTC), 0, 0
    for ds_id in registry.all_ids():
        ds = registry.get(ds_id)
        if not isinstance(ds, ChoiceDataset) or used >= n_datasets:
            continue
        try:
            planned = load_dataset(ds, data_dir, items, 0)
        except Exception:  # noqa: BLE001 - data absent here: the next dataset
            continue
        used += 1
        rows = []
        for item in planned.items:
            codes = list(item.answer.values) if item.answer else ["A"]
            for m in range(n_models):
                text = STYLES[m % len(STYLES)].format(c=codes[(m + len(item.id)) % len(codes)])
                rows.append(ResultRow(model=f"m{m:02d}", dataset=ds.id, item_id=item.id, sample=0, status="ok",
                                      error_class=None, error=None, attempts=1, response=text, prediction=None,
                                      gold=item.gold, score=0.0, measures=None, latency_ms=1.0, input_tokens=1,
                                      output_tokens=1, model_version="v", prompt_hash="p", suite_version="x",
                                      scorer_version="old", started_at=now, finished_at=now))
        insert_rows(con, rows)
        n += len(rows)
        print(f"  {ds.id}: {len(rows)} rows", file=sys.stderr)
    con.close()
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", type=int, default=30)
    ap.add_argument("--datasets", type=int, default=18)  # 18 x 300 x 30 = 162,000; 60 for the full shape
    ap.add_argument("--items", type=int, default=300)
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "r.duckdb"
        rows = build(db, args.data_dir, args.models, args.datasets, args.items)
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "engine", "rescore", str(db), "--data-dir", str(args.data_dir),
                            "--quiet"], cwd=ROOT, capture_output=True, text=True)
        took = time.perf_counter() - t0
        print(f"# command: .venv/bin/python -m bench.rescore_bench --models {args.models} --datasets {args.datasets} "
              f"--items {args.items}")
        print(p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}")
        print(f"rescore: {rows} rows in {took:.1f} s ({rows / took:,.0f} rows/s), exit {p.returncode}")


if __name__ == "__main__":
    main()
