"""`python -m engine batches DB`: the provider batches a database records; `--cancel` stops those in flight.

Listing reads the database only (beside a running sweep, its snapshot). Cancelling
asks the provider, so it needs the models file for each model's endpoint and key
variable; a cancelled batch's finished answers are still collected by the next
sweep, and its unanswered items asked again like any failed request.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import duckdb
import msgspec

from engine.config.load import load_models
from engine.config.models import ModelConfig, base_url
from benchmark.errors import UserError
from engine.report.batch_lines import table
from providers.batch.core import TERMINAL
from providers.errors import ProviderError
from providers.limits import Limits
from providers.registry import make_provider
from store.side import batches as store
from store.side.batches import BatchRecord
from store.db import connect
from store.snapshot import open_for_reading


def in_flight(recs: list[BatchRecord]) -> list[BatchRecord]:
    return [r for r in recs if r.batch_id is not None and not r.collected and r.status not in TERMINAL]


def _api(m: ModelConfig):
    from engine.lanes.batch import core as batch_core

    adapter = make_provider(m.provider, base_url=base_url(m), model=m.model, api_key=m.api_key(),
                            generation=m.generation(), limits=Limits(), timeout_s=m.timeout_s,
                            max_retries=m.max_retries, max_connections=4, backoff_base_s=m.backoff_s)
    return batch_core.make_api(m.provider, adapter)


async def cancel(con: duckdb.DuckDBPyConnection, recs: list[BatchRecord],
                 models: dict[tuple[str, str], ModelConfig]) -> list[str]:
    """Cancel each batch at its provider and store what the provider says now; one line per batch.
    ``models``: (lane, name) -> its entry in the models file ([[models]], [judge], [extractor])."""
    lines = []
    for rec in recs:
        m = models.get((rec.lane, rec.model))
        if m is None:
            lines.append(f"{rec.model} {rec.batch_id}: not cancelled (model not in the models file)")
            continue
        api = _api(m)
        assert rec.batch_id is not None
        try:
            await api.cancel(rec.batch_id)
            st = await api.status(rec.batch_id)
            store.set_status(con, rec.label, status=st.state, provider_status=st.provider_status,
                             succeeded=st.succeeded, failed=st.failed, ended=st.state in TERMINAL)
            lines.append(f"{rec.model} {rec.batch_id}: cancel requested ({st.provider_status})")
        except ProviderError as e:
            lines.append(f"{rec.model} {rec.batch_id}: not cancelled ({e})")
        finally:
            await api.aclose()
    return lines


class BatchesOptions(msgspec.Struct, frozen=True):
    db: Path
    model: str | None = None
    cancel: bool = False
    models: Path | None = None  # the models file, needed by cancel


def batches(args: BatchesOptions) -> int:
    if not args.db.is_file():
        raise UserError(f"{args.db}: no such database")
    if args.cancel:
        if args.models is None:
            raise UserError("--cancel needs --models MODELS.toml (the provider endpoints and key variables)")
        cfg = load_models(args.models, check_env=False)
        con = connect(args.db)  # writes the new statuses; fails while a sweep holds the file
        try:
            recs = in_flight(store.list_batches(con, args.model))
            if not recs:
                print("no batch in flight")
                return 0
            entries = {(store.MODEL, m.name): m for m in cfg.models}
            entries.update({(lane, h.name): h for lane, h in ((store.JUDGE, cfg.judge), (store.EXTRACTOR, cfg.extractor))
                            if h is not None})
            for line in anyio.run(cancel, con, recs, entries):
                print(line)
        finally:
            con.close()
        return 0
    con, note = open_for_reading(args.db)
    try:
        if note:
            print(note, file=sys.stderr)
        try:
            recs = store.list_batches(con, args.model)
        except duckdb.CatalogException:  # a database made before batches existed
            recs = []
    finally:
        con.close()
    if not recs:
        print("no batches recorded" + (f" for model {args.model!r}" if args.model else ""))
        return 0
    for line in table(recs):
        print(line)
    return 0
