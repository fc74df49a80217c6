from datetime import datetime, timezone

from store.results.writer import ResultRow

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def row(model="m", dataset="d", item_id="i0", *, status="ok", score=1.0, prediction="A", gold="A",
        measures=None, attempts=1, prompt_hash="p1", scorer_version="s1", sample=0, error=None):
    return ResultRow(
        model=model, dataset=dataset, item_id=item_id, sample=sample, status=status,
        error_class=None if status == "ok" else "transient", error=error, attempts=attempts,
        response=None if status != "ok" else f"Answer: {prediction}", prediction=prediction if status == "ok" else None,
        gold=gold, score=score if status == "ok" else None, measures=measures, latency_ms=1.0,
        input_tokens=10, output_tokens=2, model_version="v", prompt_hash=prompt_hash, suite_version="x",
        scorer_version=scorer_version, started_at=NOW, finished_at=NOW,
    )


def sql_metric_values(dataset_id, metrics, scored) -> dict:
    """metric -> value, aggregated by the real views from (gold, Scored) pairs of model 'm'."""
    import duckdb

    from store.hierarchy.views import ensure_views
    from store.results.writer import insert_rows

    con = duckdb.connect()
    ensure_views(con)
    for s in metrics:
        con.execute("INSERT INTO dataset_metrics VALUES (?, ?, ?, ?, ?, ?, ?, 'v')",
                    [dataset_id, s.name, s.kind, s.a, s.b, s.c, s.primary])
    insert_rows(con, [row(dataset=dataset_id, item_id=str(k), prediction=sc.prediction, gold=gold,
                          score=sc.score, measures=sc.measures) for k, (gold, sc) in enumerate(scored)])
    return dict(con.execute("SELECT metric, value FROM metric_values WHERE model = 'm'").fetchall())
