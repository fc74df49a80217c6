"""The bootstrap's inputs (store/hierarchy/bootstrap.py): what is resampled and the per-unit column sums.

Temp tables, read by bootstrap.py and by engine/report/compare.py (boot_items): boot_play, boot_items,
boot_inputs, boot_keys. Dropped by bootstrap.drop_replicates.
"""

from __future__ import annotations

import duckdb

from benchmark.metrics.kinds import play_kinds_sql


def collect_inputs(con: duckdb.DuckDBPyConnection, models: tuple[str, str] | None) -> None:
    """boot_items (the resampling universe per dataset), boot_inputs (per-unit column sums), boot_keys.

    The unit is the item; in a dataset with a play kind (its samples are plays of one scenario,
    benchmark/metrics/kinds.py: PLAY_KINDS) it is the play (item, sample), resampled in two stages
    (store/stats/draws.py: resample_plays). boot_play lists those datasets.
    """
    con.execute("CREATE OR REPLACE TEMP TABLE boot_play AS SELECT dataset FROM play_datasets")
    unit = "CASE WHEN dataset IN (SELECT dataset FROM boot_play) THEN sample ELSE 0 END"
    if models is None:
        universe = f"SELECT DISTINCT dataset, item_id, {unit} AS sample FROM results"
        params: list = []
        pick = ""
    else:
        # units both models answered (every sample of an item, or the play, ok for both)
        universe = (f"SELECT dataset, item_id, {unit} AS sample FROM results WHERE model IN (?, ?) GROUP BY ALL "
                    "HAVING count(DISTINCT model) = ? AND bool_and(status = 'ok')")
        params = [*models, len(set(models))]  # a model compared with itself: its own answered items
        pick = "SEMI JOIN picked USING (model, dataset, item_id, sample)"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE boot_items AS
        SELECT dataset, item_id, sample,
               (row_number() OVER (PARTITION BY dataset ORDER BY item_id, sample) - 1)::INTEGER AS idx,
               (dense_rank() OVER (PARTITION BY dataset ORDER BY item_id) - 1)::INTEGER AS item
        FROM ({universe}) WHERE dataset IN (SELECT dataset FROM suite_methods)""", params)
    # only the metrics a suite method reads, and the label F1s of a macro F1 that one reads
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE boot_inputs AS
        WITH used AS (
            SELECT DISTINCT dataset, metric FROM suite_methods_resolved WHERE normalization <> 'grade'
        ), needed AS (
            SELECT * FROM used
            UNION
            SELECT d.dataset, d.metric FROM dataset_metrics d
            WHERE d.kind = 'label_f1' AND d.dataset IN (
                SELECT u.dataset FROM used u JOIN dataset_metrics m USING (dataset, metric)
                WHERE m.kind = 'macro_f1')
        ), picked AS (
            SELECT model, dataset, item_id, sample
            FROM boot_items JOIN (SELECT unnest(?::VARCHAR[]) AS model) ON true
        ), plays AS (
            -- a play kind's rows, each weighted 1 / (the item's plays with a value in that column), so an
            -- item's plays sum to its mean: a drawn scenario counts once, whatever its number of plays
            SELECT model, dataset, metric, kind, item_id, sample, a, b, c,
                   count(a) OVER w AS ka, count(b) OVER w AS kb, count(c) OVER w AS kc
            FROM metric_rows SEMI JOIN needed USING (dataset, metric) {pick}
            WHERE kind IN ({play_kinds_sql()})
            WINDOW w AS (PARTITION BY model, dataset, metric, item_id)
        ), judged AS (
            -- judge verdicts; in a play dataset weighted as the play kinds are (metric_values averages a
            -- scenario's verdicts first)
            SELECT *, CASE WHEN dataset IN (SELECT dataset FROM boot_play) THEN count(v) OVER w ELSE 1 END AS k
            FROM (SELECT model, dataset, metric, item_id, {unit} AS sample, v
                  FROM judge_metric_inputs SEMI JOIN used USING (dataset, metric)) j0 {pick}
            WINDOW w AS (PARTITION BY model, dataset, metric, item_id)
        )
        SELECT 'metric' AS src, NULL::VARCHAR AS suite, NULL::VARCHAR AS version, NULL::VARCHAR AS method,
               i.model, i.dataset, i.metric, any_value(i.kind) AS kind, i.item_id, i.sample,
               coalesce(sum(a), 0) AS sa, count(a)::DOUBLE AS na, coalesce(sum(b), 0) AS sb, count(b)::DOUBLE AS nb,
               coalesce(sum(c), 0) AS sc, count(c)::DOUBLE AS nc
        FROM (SELECT model, dataset, metric, kind, item_id, {unit} AS sample, a, b, c
              FROM metric_rows SEMI JOIN needed USING (dataset, metric)
              WHERE kind NOT IN ({play_kinds_sql()})) i {pick}
        GROUP BY i.model, i.dataset, i.metric, i.item_id, i.sample
        UNION ALL
        SELECT 'metric', NULL, NULL, NULL, i.model, i.dataset, i.metric, i.kind, i.item_id, i.sample,
               coalesce(a / ka, 0), CASE WHEN a IS NULL THEN 0 ELSE 1 / ka END,
               coalesce(b / kb, 0), CASE WHEN b IS NULL THEN 0 ELSE 1 / kb END,
               coalesce(c / kc, 0), CASE WHEN c IS NULL THEN 0 ELSE 1 / kc END
        FROM plays i
        UNION ALL
        SELECT 'metric', NULL, NULL, NULL, j.model, j.dataset, j.metric, 'mean', j.item_id, j.sample,
               sum(v / k), sum(1 / k), 0, 0, 0, 0
        FROM judged j
        GROUP BY j.model, j.dataset, j.metric, j.item_id, j.sample
        UNION ALL
        SELECT 'grade', g.suite, g.version, g.method, g.model, g.dataset, g.metric, 'mean', g.item_id, g.sample,
               sum(points), count(points), 0, 0, 0, 0
        FROM (SELECT suite, version, method, model, dataset, metric, item_id, {unit} AS sample, points
              FROM method_grade_points) g {pick}
        GROUP BY ALL""", [list(models or ())])
    con.execute("""
        CREATE OR REPLACE TEMP TABLE boot_keys AS
        SELECT (row_number() OVER (ORDER BY dataset, src, suite, version, method, model, metric) - 1)::INTEGER
                   AS key_id, *
        FROM (SELECT DISTINCT src, suite, version, method, model, dataset, metric, kind FROM boot_inputs)""")
