"""Issue target for provider batches, measured: three batched models (OpenAI, Anthropic, Gemini wires on the
simulator), 40 items each, 5% of batch requests failing; the sweep is killed with SIGKILL once its batches are
submitted, then rerun. Prints what was submitted and answered, and the rows stored.

    python -m bench.batch_target [--items 40] [--error-rate 0.05]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from simulator.process import SimServerProcess

ROOT = Path(__file__).resolve().parents[1]


def models_toml(sim: SimServerProcess) -> str:
    out = []
    for name, provider, url in (("oa", "openai", sim.base_url), ("an", "anthropic", sim.root_url),
                                ("ge", "gemini", sim.root_url)):
        out.append(f'[[models]]\nname = "{name}"\nprovider = "{provider}"\nbase_url = "{url}"\nmodel = "{name}-m"\n'
                   f"max_tokens = 8\nbatch = true\nbatch_poll_s = 0.2\n"
                   f"price = {{ input_per_mtok = 1.0, output_per_mtok = 2.0 }}\n")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=40)
    ap.add_argument("--error-rate", type=float, default=0.05)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="batch-target-"))
    db = tmp / "r.duckdb"
    env = {**os.environ, "OPENAI_API_KEY": "sk-" + "x" * 24, "ANTHROPIC_API_KEY": "sk-ant-" + "y" * 24,
           "GEMINI_API_KEY": "g" * 30, "GOOGLE_API_KEY": "g" * 30}
    with SimServerProcess(mode="gold", batch_latency_s=3.0, batch_error_rate=a.error_rate) as sim:
        models = tmp / "models.toml"
        models.write_text(models_toml(sim))
        args = [sys.executable, "-m", "engine", "sweep", str(models), str(db), "--datasets", "synthetic",
                "--limit", str(a.items), "--quiet"]
        est = subprocess.run([*args[:-1], "--estimate"], cwd=ROOT, env=env, capture_output=True, text=True)
        print("--estimate:\n" + est.stdout.rstrip())
        t0 = time.monotonic()
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while sum(sim.stats()["batches_created"].values()) < 3:
            if proc.poll() is not None or time.monotonic() - t0 > 120:
                sys.exit(f"the sweep ended before submitting: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
            time.sleep(0.05)
        time.sleep(1.0)  # after the engine stored the provider ids (the batches run 3 s)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed = sim.stats()
        print(f"killed with SIGKILL {time.monotonic() - t0:.1f} s after start; batches created so far:",
              dict(killed["batches_created"]))
        t1 = time.monotonic()
        r = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        print(f"rerun: exit {r.returncode} in {time.monotonic() - t1:.1f} s")
        st = sim.stats()
    answered = st["batch_answered"]
    print("batches created per provider:", dict(st["batches_created"]))
    print("requests submitted per provider:", dict(st["batch_requests"]))
    print(f"requests answered: {len(answered)} distinct, answered twice: {sum(1 for n in answered.values() if n > 1)}")
    print("requests failed by the simulator (then retried):", sum(st["batch_errored"].values()))
    print("synchronous calls:", sum(st["by_model"].values()))
    con = duckdb.connect(str(db), read_only=True)
    for m, n, ok, att in con.execute("SELECT model, count(*), count(*) FILTER (WHERE status = 'ok'), max(attempts) "
                                     "FROM results GROUP BY 1 ORDER BY 1").fetchall():
        print(f"rows {m}: {n}, ok {ok}, max attempts {att}")
    for m, n, collected in con.execute("SELECT model, count(*), count(*) FILTER (WHERE collected) FROM batches "
                                       "GROUP BY 1 ORDER BY 1").fetchall():
        print(f"batches {m}: {n} recorded, {collected} collected")


if __name__ == "__main__":
    main()
