-- Bootstrap intervals, materialised by store/hierarchy/bootstrap.py: compute_intervals(con).
-- Created after estimates.sql (the signature reads `estimates`) and before views.sql, whose
-- leaderboard and intervals views read them.
-- Semantics in docs/suites.md (section "Intervals").

-- The 95 % percentile bounds per (suite, version, model, level, node), level in
-- dataset / task / sub_ability / ability / overall (node = the id; 'overall' for
-- the overall score). rank_low / rank_high / p_veto only on the overall rows.
CREATE TABLE IF NOT EXISTS interval_bounds (
    suite     VARCHAR NOT NULL,
    version   VARCHAR NOT NULL,
    model     VARCHAR NOT NULL,
    level     VARCHAR NOT NULL,
    node      VARCHAR NOT NULL,
    ci_low    DOUBLE,
    ci_high   DOUBLE,
    rank_low  INTEGER,   -- 95 % range of the model's rank over the replicates where it is ranked
    rank_high INTEGER,
    p_veto    DOUBLE,    -- share of replicates in which the gate vetoes the model
    PRIMARY KEY (suite, version, model, level, node)
);

-- What the stored bounds were computed from: a fingerprint of every input
-- (results, judgements, dataset metrics, suite tables, imported scores) and the
-- bootstrap's parameters. compute_intervals recomputes only when it changed.
CREATE TABLE IF NOT EXISTS interval_state (
    fingerprint VARCHAR NOT NULL,
    replicates  INTEGER NOT NULL,
    seed        BIGINT NOT NULL,
    seconds     DOUBLE,
    computed_at TIMESTAMPTZ,
    signature   VARCHAR     -- interval_signature() when computed: the views show the bounds only while it holds
);
ALTER TABLE interval_state ADD COLUMN IF NOT EXISTS signature VARCHAR;

-- A cheap signature of the results the bounds were computed from (a few ms, unlike the
-- fingerprint): rows, ok rows and the latest answer, verdicts, imports, suite loads, and a
-- hash of the small tables of parameters (suite weights, gate and tau, methods, grades,
-- metric definitions, imported scores), which a user may UPDATE: they are data; and of the
-- estimates (store/estimates/estimates.sql), which `estimate` replaces without touching the results.
-- The leaderboard and intervals views show stored bounds only while it is unchanged,
-- so a sweep writing new rows (or a live view reading during one), or a threshold lowered
-- in the database, never pairs new scores with old intervals: the bounds read NULL until
-- compute_intervals (refresh_intervals, `report`) computes them again. A rescore, which
-- changes scores in place, is not seen here: it refreshes the bounds itself.
CREATE OR REPLACE MACRO interval_parameters() AS (
    SELECT hash(concat_ws(':',
        (SELECT sum(hash(suite, version, gate, tau, missing_levels)) FROM suites),
        (SELECT sum(hash(t)) FROM suite_abilities t), (SELECT sum(hash(t)) FROM suite_sub_abilities t),
        (SELECT sum(hash(t)) FROM suite_tasks t), (SELECT sum(hash(t)) FROM suite_task_datasets t),
        (SELECT sum(hash(t)) FROM suite_datasets t), (SELECT sum(hash(t)) FROM suite_methods t),
        (SELECT sum(hash(t)) FROM suite_grades t), (SELECT sum(hash(t)) FROM suite_difficulty t),
        (SELECT sum(hash(t)) FROM dataset_metrics t), (SELECT sum(hash(t)) FROM judge_metrics t),
        (SELECT sum(hash(suite, dataset, model, score, override)) FROM external_scores),
        (SELECT sum(hash(model, dataset, estimate, ci_low, ci_high, signature)) FROM estimates)))
);
CREATE OR REPLACE MACRO interval_signature() AS (
    SELECT concat_ws(':', r.n, r.n_ok, r.last, j.n, j.n_ok, e.n, e.last, s.last, interval_parameters())
    FROM (SELECT count(*) AS n, count(*) FILTER (WHERE status = 'ok') AS n_ok, max(finished_at) AS last
          FROM results) r,
         (SELECT count(*) AS n, count(*) FILTER (WHERE status IN ('ok', 'empty')) AS n_ok FROM judgements) j,
         (SELECT count(*) AS n, max(imported_at) AS last FROM external_scores) e,
         (SELECT max(loaded_at) AS last FROM suites) s
);
