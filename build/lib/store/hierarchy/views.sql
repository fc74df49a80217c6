-- Views over results and the suite tables (store/hierarchy/suite_tables.py).
-- Every layer is computed from item rows, so a changed weight or metric
-- definition changes the answer without re-running a model. Created by
-- store/hierarchy/views.py: ensure_views(con). Semantics in docs/suites.md.
--
-- Layers (the MoodBench 1.0 paper, Appendix 7.1):
--   metric_values -> method_scores (Alg. 2) -> dataset_scores (Alg. 3)
--   -> task_scores -> level_scores (Alg. 3) -> sub_ability_scores (Alg. 4)
--   -> ability_scores (Alg. 3) -> leaderboard (Alg. 5)
-- Every suite-aware view carries (suite, version). At each layer an absent
-- child (no score) is dropped and the weights of those present renormalize;
-- `coverage` is the weighted share of the child weight planned by the suite
-- that has data, carried up from item coverage at the leaves.

-- Per (model, dataset), whatever the suite: one pass over results for the counts
-- and for the mean of the score column, which is what most metrics are (accuracy):
-- metric_values takes those from here and sends only the other metrics through
-- the per-item CASE/JSON path, which costs several times more per row.
CREATE OR REPLACE VIEW dataset_item_stats AS
SELECT model, dataset,
       count(*) AS n_items,
       count(*) FILTER (WHERE status = 'ok') AS n_ok,
       count(*) FILTER (WHERE status = 'error') AS n_error,
       -- imported rows (store/estimates/import_items.py) are never unparsed: another harness read them, or did not say
       count(*) FILTER (WHERE status = 'ok' AND prediction IS NULL AND extracted_by IS DISTINCT FROM 'imported')
           AS n_unparsed,
       avg(score) FILTER (WHERE status = 'ok') AS mean_score
FROM results
GROUP BY model, dataset;

-- Coverage per (model, dataset): rows that succeeded over the items planned (or
-- stored, if more). Items a killed sweep never attempted count as missing.
CREATE OR REPLACE VIEW dataset_coverage AS
SELECT s.model, s.dataset, greatest(s.n_items, coalesce(p.planned, 0)) AS n_items, s.n_ok, s.n_error,
       s.n_unparsed, s.n_ok / greatest(s.n_items, coalesce(p.planned, 0)) AS coverage
FROM dataset_item_stats s LEFT JOIN planned_items p ON p.model = s.model AND p.dataset = s.dataset;

-- Per-row values feeding each metric (only `ok` rows: an error is not a wrong answer).
-- The CASEs read the score column directly when the metric names it, and skip
-- an unused b/c without touching JSON: JSON extraction is the costly part.
CREATE OR REPLACE VIEW metric_rows AS
SELECT r.model, r.dataset, r.item_id, r.sample, d.metric, d.kind, d.is_primary,
       CASE WHEN d.a = 'score' THEN r.score
            ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.a) AS DOUBLE) END AS a,
       CASE WHEN d.b IS NULL THEN NULL WHEN d.b = 'score' THEN r.score
            ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.b) AS DOUBLE) END AS b,
       CASE WHEN d.c IS NULL THEN NULL WHEN d.c = 'score' THEN r.score
            ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.c) AS DOUBLE) END AS c,
       d.a AS a_source,
       r.prediction IS NOT NULL OR r.extracted_by IS NOT DISTINCT FROM 'imported' AS parsed  -- read by the extractor (store/hierarchy/unparsed.sql)
FROM results r JOIN dataset_metrics d ON d.dataset = r.dataset
WHERE r.status = 'ok';

-- The datasets whose samples are plays of one scenario (a metric of a play kind, benchmark/metrics/kinds.py).
CREATE OR REPLACE VIEW play_datasets AS
SELECT DISTINCT dataset FROM dataset_metrics WHERE kind IN ({{play_kinds}});

-- Per-item values feeding each metric: a row per answer, except for the play kinds
-- (benchmark/metrics/kinds.py: PLAY_KINDS), whose item is a scenario played `samples` times:
-- one row per item, a, b and c averaged over its ok plays (docs/interactive.md, "Scores").
CREATE OR REPLACE VIEW metric_inputs AS
SELECT model, dataset, item_id, metric, kind, is_primary, a, b, c, a_source, parsed
FROM metric_rows
WHERE kind NOT IN ({{play_kinds}})
UNION ALL
SELECT model, dataset, item_id, metric, any_value(kind), any_value(is_primary), avg(a), avg(b), avg(c),
       any_value(a_source), bool_and(parsed)
FROM metric_rows
WHERE kind IN ({{play_kinds}})
GROUP BY model, dataset, item_id, metric;

-- One value per (model, dataset, metric), on the metric's own scale (0..1 for ratios).
-- The CASE of the second branch, one WHEN per aggregate kind, is rendered from
-- benchmark/metrics/kinds.py (KINDS: each kind's SQL beside its Python reference);
-- the first branch is only a shortcut for kind 'mean' over the score column.
CREATE OR REPLACE VIEW metric_values AS
SELECT s.model, s.dataset, d.metric, d.is_primary, s.n_ok AS n, s.mean_score AS value
FROM dataset_item_stats s JOIN dataset_metrics d ON d.dataset = s.dataset
WHERE d.kind = 'mean' AND d.a = 'score' AND s.n_ok > 0
UNION ALL
SELECT model, dataset, metric, any_value(is_primary) AS is_primary, count(*) AS n,
       {{metric_kind_case}} AS value
FROM metric_inputs
WHERE NOT (kind = 'mean' AND a_source = 'score')
GROUP BY model, dataset, metric
-- Metrics computed from judge verdicts (store/side/judgements.sql), never primary.
UNION ALL
SELECT model, dataset, metric, is_primary, n, value FROM judge_metric_values
WHERE dataset NOT IN (SELECT dataset FROM play_datasets)
-- ... of a play dataset: each scenario's verdicts averaged over its plays first, as its play kinds are.
UNION ALL
SELECT model, dataset, metric, false, count(*), avg(v)
FROM (SELECT model, dataset, metric, item_id, avg(v) AS v FROM judge_metric_inputs
      WHERE dataset IN (SELECT dataset FROM play_datasets) GROUP BY ALL)
GROUP BY model, dataset, metric;

-- Each suite method with its concrete metric (NULL metric = the dataset's primary one).
CREATE OR REPLACE VIEW suite_methods_resolved AS
SELECT m.suite, m.version, m.dataset, m.method, coalesce(m.metric, p.metric) AS metric,
       m.normalization, m.lo, m.hi, m.weight
FROM suite_methods m
LEFT JOIN dataset_metrics p ON m.metric IS NULL AND p.dataset = m.dataset AND p.is_primary;

-- Per-item points of the 'grade' methods: each item's label (the metric's `a` value:
-- the score column or a measures key) mapped to points; items whose label has no
-- grade are left out. Per item so the bootstrap (store/hierarchy/bootstrap.py) can resample it.
CREATE OR REPLACE VIEW method_grade_points AS
SELECT g.suite, g.version, g.model, g.dataset, g.method, g.metric, g.weight, g.item_id, sg.points, g.sample
FROM (
    SELECT m.suite, m.version, r.model, m.dataset, m.method, m.metric, m.weight, r.item_id, r.sample,
           CASE WHEN d.a = 'score' THEN CAST(r.score AS VARCHAR)
                ELSE json_extract_string(r.measures, '$.' || d.a) END AS label
    FROM suite_methods_resolved m
    JOIN dataset_metrics d ON d.dataset = m.dataset AND d.metric = m.metric
    JOIN results r ON r.dataset = m.dataset AND r.status = 'ok'
    WHERE m.normalization = 'grade'
) g
JOIN suite_grades sg ON sg.suite = g.suite AND sg.version = g.version AND sg.dataset = g.dataset
     AND sg.method = g.method
     AND sg.grade_key = coalesce(CAST(TRY_CAST(g.label AS DOUBLE) AS VARCHAR), g.label);

-- Algorithm 2's normalization of a metric value to 0-100 ('grade' is averaged per item).
CREATE OR REPLACE MACRO normalized_score(normalization, value, lo, hi) AS
    CASE normalization
        WHEN 'ratio' THEN 100 * value
        WHEN 'raw' THEN value
        WHEN 'numeric' THEN 100 * (value - lo) / (hi - lo)
    END;

-- Algorithm 2: one normalized 0-100 score per (suite, model, dataset, method).
CREATE OR REPLACE VIEW method_scores AS
SELECT m.suite, m.version, v.model, m.dataset, m.method, m.metric, m.normalization, m.weight,
       v.n, v.value AS raw, normalized_score(m.normalization, v.value, m.lo, m.hi) AS score
FROM suite_methods_resolved m
JOIN metric_values v ON v.dataset = m.dataset AND v.metric = m.metric
WHERE m.normalization <> 'grade'
UNION ALL
SELECT suite, version, model, dataset, method, metric, 'grade', any_value(weight), count(*), NULL, avg(points)
FROM method_grade_points
GROUP BY suite, version, model, dataset, method, metric;

-- The datasets of a suite whose score is 100 x the mean item score (every method a 'ratio' of a
-- kind 'mean' metric over the score column): where an estimate from a fraction of the items
-- (store/estimates/estimates.sql, docs/estimates.md), which is of exactly that, can stand for the score.
CREATE OR REPLACE VIEW estimable_datasets AS
SELECT m.suite, m.version, m.dataset
FROM suite_methods_resolved m
LEFT JOIN dataset_metrics d ON d.dataset = m.dataset AND d.metric = m.metric
GROUP BY ALL
HAVING bool_and(coalesce(m.normalization = 'ratio' AND d.kind IN ('mean', 'play_mean') AND d.a = 'score', false));

-- Algorithm 3, method -> dataset. One row per (suite, model, dataset) that has item
-- rows or an imported score. Precedence: an external score imported with override;
-- then a fresh estimate (the model answered part of an estimable dataset); then item
-- scores; an external score counts when the dataset has none of these.
CREATE OR REPLACE VIEW dataset_scores AS
WITH planned AS (
    SELECT suite, version, dataset, sum(weight) AS w FROM suite_methods GROUP BY ALL
), from_items AS (
    SELECT suite, version, model, dataset,
           sum(weight * score) / nullif(sum(weight), 0) AS score, sum(weight) AS w
    FROM method_scores WHERE score IS NOT NULL GROUP BY ALL
), items AS (
    SELECT d.suite, d.version, c.* FROM suite_datasets d JOIN dataset_coverage c ON c.dataset = d.dataset
), ext AS (
    SELECT d.suite, d.version, e.model, e.dataset, e.score, e.override
    FROM suite_datasets d JOIN external_scores e ON e.suite = d.suite AND e.dataset = d.dataset
), est AS (
    SELECT x.suite, x.version, e.model, e.dataset, e.estimate
    FROM dataset_estimates e JOIN estimable_datasets x ON x.dataset = e.dataset
), merged AS (
    SELECT coalesce(c.suite, e.suite) AS suite, coalesce(c.version, e.version) AS version,
           coalesce(c.model, e.model) AS model, coalesce(c.dataset, e.dataset) AS dataset,
           c.n_items, c.n_ok, c.n_error, c.n_unparsed, c.coverage AS item_coverage,
           i.score AS items_score, i.w / p.w AS method_share, e.score AS external_score, x.estimate,
           CASE WHEN e.score IS NOT NULL AND (e.override OR i.score IS NULL) THEN 'external'
                WHEN x.estimate IS NOT NULL THEN 'estimate'
                WHEN i.score IS NOT NULL THEN 'items' END AS source
    FROM items c
    FULL OUTER JOIN ext e ON e.suite = c.suite AND e.version = c.version AND e.model = c.model
         AND e.dataset = c.dataset
    LEFT JOIN from_items i ON i.suite = coalesce(c.suite, e.suite) AND i.version = coalesce(c.version, e.version)
         AND i.model = coalesce(c.model, e.model) AND i.dataset = coalesce(c.dataset, e.dataset)
    LEFT JOIN planned p ON p.suite = coalesce(c.suite, e.suite) AND p.version = coalesce(c.version, e.version)
         AND p.dataset = coalesce(c.dataset, e.dataset)
    LEFT JOIN est x ON x.suite = c.suite AND x.version = c.version AND x.model = c.model AND x.dataset = c.dataset
)
SELECT suite, version, model, dataset, n_items, n_ok, n_error, n_unparsed, item_coverage,
       CASE source WHEN 'external' THEN external_score WHEN 'estimate' THEN estimate
                   WHEN 'items' THEN items_score END AS score,
       -- an imported score stands for the whole dataset; an estimate's coverage stays the items
       -- answered: it says how much was measured, `estimated` that the rest was estimated
       CASE source WHEN 'external' THEN 1.0 WHEN 'items' THEN item_coverage * method_share
                   WHEN 'estimate' THEN item_coverage * method_share ELSE 0.0 END AS coverage,
       source, items_score, external_score,
       n_unparsed / nullif(n_ok, 0) AS unparsed_share,  -- answers that could not be read (store/hierarchy/unparsed.sql)
       source IS NOT DISTINCT FROM 'estimate' AS estimated
FROM merged;

-- hierarchy: begin
-- The layers above dataset_scores are a template rendered twice (store/hierarchy/views.py):
-- as the views below, one row per model, and by the bootstrap (store/hierarchy/bootstrap.py)
-- as boot_* views with one row per (replicate, model). Placeholders in double
-- braces: p prefixes the view names, g:x adds x.replicate to the keys, bounds
-- and bounds_join add the leaderboard's stored intervals (interval_tables.sql).
-- Algorithm 3, datasets -> task (Eq. 10).
CREATE OR REPLACE VIEW {{p}}task_scores AS
WITH planned AS (
    SELECT suite, version, task, sum(weight) AS w, count(*) AS n FROM suite_task_datasets GROUP BY ALL
)
SELECT t.suite, t.version, {{g:d}}d.model, t.task, t.sub_ability, t.level, any_value(t.weight) AS weight,
       sum(td.weight * d.score) / nullif(sum(td.weight) FILTER (WHERE d.score IS NOT NULL), 0) AS score,
       sum(td.weight * d.coverage) / any_value(p.w) AS coverage,
       count(d.score) AS n_present, any_value(p.n) AS n_planned,
       bool_or(d.estimated) AS estimated  -- an estimated dataset score went in
FROM suite_task_datasets td
JOIN {{p}}dataset_scores d ON d.suite = td.suite AND d.version = td.version AND d.dataset = td.dataset
JOIN suite_tasks t ON t.suite = td.suite AND t.version = td.version AND t.task = td.task
JOIN planned p ON p.suite = td.suite AND p.version = td.version AND p.task = td.task
GROUP BY t.suite, t.version, {{g:d}}d.model, t.task, t.sub_ability, t.level;

-- Algorithm 3, tasks of one level of a sub-ability -> S(T^level) (Eq. 11).
CREATE OR REPLACE VIEW {{p}}level_scores AS
WITH planned AS (
    SELECT suite, version, sub_ability, level, sum(weight) AS w, count(*) AS n
    FROM suite_tasks GROUP BY ALL
)
SELECT t.suite, t.version, {{g:t}}t.model, t.sub_ability, t.level,
       sum(t.weight * t.score) / nullif(sum(t.weight) FILTER (WHERE t.score IS NOT NULL), 0) AS score,
       sum(t.weight * t.coverage) / any_value(p.w) AS coverage,
       count(t.score) AS n_present, any_value(p.n) AS n_planned, bool_or(t.estimated) AS estimated
FROM {{p}}task_scores t
JOIN planned p ON p.suite = t.suite AND p.version = t.version AND p.sub_ability = t.sub_ability
     AND p.level = t.level
GROUP BY t.suite, t.version, {{g:t}}t.model, t.sub_ability, t.level;

-- Algorithm 4, levels -> sub-ability. The difficulty row is looked up by the set of
-- levels: those with a score ('table', the paper) or those the suite plans
-- ('renormalize', the reference: planned weights rescaled over what is present).
-- Coverage always weighs the levels by the planned row.
CREATE OR REPLACE VIEW {{p}}sub_ability_scores AS
WITH planned AS (
    SELECT t.suite, t.version, t.sub_ability, any_value(s.weight) AS weight,
           concat(CASE WHEN bool_or(t.level = 'L') THEN 'L' ELSE '' END,
                  CASE WHEN bool_or(t.level = 'M') THEN 'M' ELSE '' END,
                  CASE WHEN bool_or(t.level = 'H') THEN 'H' ELSE '' END) AS levels
    FROM suite_tasks t
    JOIN suite_sub_abilities s ON s.suite = t.suite AND s.version = t.version AND s.sub_ability = t.sub_ability
    GROUP BY ALL
), planned_w AS (
    SELECT p.suite, p.version, p.sub_ability, sum(d.weight) AS w
    FROM planned p JOIN suite_difficulty d ON d.suite = p.suite AND d.version = p.version AND d.levels = p.levels
    GROUP BY ALL
), levels AS (
    -- the set of levels with a score, by a window so level_scores is computed once
    SELECT *,
           concat(CASE WHEN bool_or(level = 'L' AND score IS NOT NULL) OVER w THEN 'L' ELSE '' END,
                  CASE WHEN bool_or(level = 'M' AND score IS NOT NULL) OVER w THEN 'M' ELSE '' END,
                  CASE WHEN bool_or(level = 'H' AND score IS NOT NULL) OVER w THEN 'H' ELSE '' END) AS present
    FROM {{p}}level_scores
    WINDOW w AS (PARTITION BY {{g:}}suite, version, model, sub_ability)
)
SELECT l.suite, l.version, {{g:l}}l.model, l.sub_ability, any_value(pl.weight) AS weight,
       sum(wk.weight * l.score) / nullif(sum(wk.weight) FILTER (WHERE l.score IS NOT NULL), 0) AS score,
       sum(wp.weight * l.coverage) / any_value(pw.w) AS coverage,
       any_value(l.present) AS levels_present, any_value(pl.levels) AS levels_planned,
       bool_or(l.estimated) AS estimated
FROM levels l
JOIN suites s ON s.suite = l.suite AND s.version = l.version
JOIN planned pl ON pl.suite = l.suite AND pl.version = l.version AND pl.sub_ability = l.sub_ability
JOIN planned_w pw ON pw.suite = l.suite AND pw.version = l.version AND pw.sub_ability = l.sub_ability
LEFT JOIN suite_difficulty wk ON wk.suite = l.suite AND wk.version = l.version AND wk.level = l.level
     AND wk.levels = CASE s.missing_levels WHEN 'table' THEN l.present ELSE pl.levels END
LEFT JOIN suite_difficulty wp ON wp.suite = l.suite AND wp.version = l.version AND wp.level = l.level
     AND wp.levels = pl.levels
GROUP BY l.suite, l.version, {{g:l}}l.model, l.sub_ability;

-- Algorithm 3, sub-abilities -> main ability (Eq. 13).
CREATE OR REPLACE VIEW {{p}}ability_scores AS
WITH planned AS (
    SELECT suite, version, ability, sum(weight) AS w, count(*) AS n FROM suite_sub_abilities GROUP BY ALL
)
SELECT p.suite, p.version, {{g:s}}s.model, p.ability,
       sum(s.weight * s.score) / nullif(sum(s.weight) FILTER (WHERE s.score IS NOT NULL), 0) AS score,
       sum(s.weight * s.coverage) / any_value(p.w) AS coverage,
       count(s.score) AS n_present, any_value(p.n) AS n_planned, bool_or(s.estimated) AS estimated
FROM {{p}}sub_ability_scores s
JOIN suite_sub_abilities sa ON sa.suite = s.suite AND sa.version = s.version AND sa.sub_ability = s.sub_ability
JOIN planned p ON p.suite = s.suite AND p.version = s.version AND p.ability = sa.ability
GROUP BY p.suite, p.version, {{g:s}}s.model, p.ability;

-- Algorithm 5. raw_total: weighted mean of the main abilities present (the gate
-- excluded); total: raw_total, or 0 when the gate score is under tau (vetoed);
-- NULL (unranked) when the gate has no data: a model of unknown safety is not
-- ranked. coverage = the lesser of the coverage of raw_total and of the gate:
-- either part being partial makes the row partial.
-- Gate scores are rounded to 1e-9 before the comparison so float noise in an
-- exact 60 cannot flip the veto.
CREATE OR REPLACE VIEW {{p}}leaderboard AS
WITH planned AS (
    SELECT a.suite, a.version, sum(a.weight) FILTER (WHERE a.ability IS DISTINCT FROM s.gate) AS w
    FROM suite_abilities a JOIN suites s ON s.suite = a.suite AND s.version = a.version
    GROUP BY ALL
), per_model AS (
    SELECT a.suite, a.version, {{g:a}}a.model, any_value(s.gate) AS gate, any_value(s.tau) AS tau,
           sum(sa.weight * a.score) FILTER (WHERE a.ability IS DISTINCT FROM s.gate)
             / nullif(sum(sa.weight) FILTER (WHERE a.ability IS DISTINCT FROM s.gate
                                              AND a.score IS NOT NULL), 0) AS raw_total,
           sum(sa.weight * a.coverage) FILTER (WHERE a.ability IS DISTINCT FROM s.gate)
             / any_value(p.w) AS main_coverage,
           max(a.score) FILTER (WHERE a.ability = s.gate) AS gate_score,
           max(a.coverage) FILTER (WHERE a.ability = s.gate) AS gate_coverage,
           bool_or(a.estimated) AS estimated  -- the gate's too: it decides the veto
    FROM {{p}}ability_scores a
    JOIN suites s ON s.suite = a.suite AND s.version = a.version
    JOIN suite_abilities sa ON sa.suite = a.suite AND sa.version = a.version AND sa.ability = a.ability
    JOIN planned p ON p.suite = a.suite AND p.version = a.version
    GROUP BY a.suite, a.version, {{g:a}}a.model
), judged AS (
    SELECT *,
           CASE WHEN gate IS NULL THEN false
                WHEN gate_score IS NULL THEN NULL
                ELSE round(gate_score, 9) < tau END AS vetoed
    FROM per_model
), totals AS (
    SELECT *, CASE WHEN vetoed THEN 0.0 WHEN NOT vetoed THEN raw_total END AS total,
           (vetoed = false AND raw_total IS NOT NULL) AS ranked
    FROM judged
)
SELECT {{g:totals}}totals.suite, totals.version, totals.model,
       CASE WHEN ranked THEN rank() OVER (PARTITION BY {{g:totals}}totals.suite, totals.version, ranked
                                          ORDER BY total DESC) END AS rank,
       total, raw_total, vetoed,
       least(coalesce(main_coverage, 0.0),
             CASE WHEN gate IS NULL THEN 1.0 ELSE coalesce(gate_coverage, 0.0) END) AS coverage,
       gate_score, gate_coverage, main_coverage, estimated{{bounds}}
FROM totals{{bounds_join}};

-- hierarchy: end

-- Every weight of every loaded suite, one row per edge (read-only convenience:
-- UPDATE the suite_* tables themselves).
CREATE OR REPLACE VIEW suite_weights AS
SELECT suite, version, 'ability' AS layer, NULL AS parent, ability AS child, weight FROM suite_abilities
UNION ALL SELECT suite, version, 'sub_ability', ability, sub_ability, weight FROM suite_sub_abilities
UNION ALL SELECT suite, version, 'task', sub_ability, task, weight FROM suite_tasks
UNION ALL SELECT suite, version, 'dataset', task, dataset, weight FROM suite_task_datasets
UNION ALL SELECT suite, version, 'method', dataset, method, weight FROM suite_methods
UNION ALL SELECT suite, version, 'difficulty', levels, level, weight FROM suite_difficulty;

-- Suite methods that name no metric the dataset's adapter declared (only for
-- datasets the sweep has described in dataset_metrics): such a method never scores.
CREATE OR REPLACE VIEW suite_method_problems AS
SELECT m.suite, m.version, m.dataset, m.method,
       CASE WHEN m.metric IS NULL THEN 'the dataset declares no primary metric'
            ELSE 'the dataset declares no metric ' || m.metric END AS problem
FROM suite_methods_resolved m
WHERE m.dataset IN (SELECT dataset FROM dataset_metrics)
  AND (m.metric IS NULL OR m.metric NOT IN (SELECT metric FROM dataset_metrics d WHERE d.dataset = m.dataset))
  AND (m.metric IS NULL OR m.metric NOT IN (SELECT metric FROM judge_metrics j WHERE j.dataset = m.dataset));

-- Bootstrap intervals beside each node's point estimate (the views above, so
-- `score` is exactly theirs). The bounds are stored by store/hierarchy/bootstrap.py:
-- compute_intervals(con), which `report` runs when the results changed; NULL
-- bounds: not computed yet, or the results changed since (interval_signature()). source: 'items',
-- 'estimate' (from a fraction of the items: the estimate's own interval) or 'external' (an imported
-- score, held constant: zero width) on dataset rows; estimated: an estimated dataset score went in. Semantics in docs/suites.md.
CREATE OR REPLACE VIEW intervals AS
WITH points AS (
    SELECT suite, version, model, 'dataset' AS level, dataset AS node, score, source, estimated FROM dataset_scores
    UNION ALL SELECT suite, version, model, 'task', task, score, NULL, estimated FROM task_scores
    UNION ALL SELECT suite, version, model, 'sub_ability', sub_ability, score, NULL, estimated FROM sub_ability_scores
    UNION ALL SELECT suite, version, model, 'ability', ability, score, NULL, estimated FROM ability_scores
    -- the would-be score: its interval is the score's own uncertainty; the veto's is p_veto
    UNION ALL SELECT suite, version, model, 'overall', 'overall', raw_total, NULL, estimated FROM leaderboard
)
SELECT p.suite, p.version, p.model, p.level, p.node, p.score, b.ci_low, b.ci_high, p.source, p.estimated
FROM points p
LEFT JOIN interval_bounds b ON b.suite = p.suite AND b.version = p.version AND b.model = p.model
     AND b.level = p.level AND b.node = p.node AND {{fresh_bounds}};

-- The suite's plan, one row per (ability, sub-ability, task, dataset) with names and weights, in suite
-- order (`ORDER BY position`): what the drill-downs of `report` and the HTML report walk.
CREATE OR REPLACE VIEW suite_plan AS
SELECT a.suite, a.version, a.ability, a.name AS a_name, a.weight AS a_w, s.sub_ability, s.name AS s_name,
       s.weight AS s_w, t.task, t.name AS t_name, t.level, t.weight AS t_w, td.dataset, d.name AS d_name,
       td.weight AS d_w,
       row_number() OVER (PARTITION BY a.suite, a.version
                          ORDER BY a.position, s.position, t.position, td.position) AS position
FROM suite_abilities a
JOIN suite_sub_abilities s USING (suite, version, ability)
JOIN suite_tasks t USING (suite, version, sub_ability)
JOIN suite_task_datasets td USING (suite, version, task)
JOIN suite_datasets d USING (suite, version, dataset);
