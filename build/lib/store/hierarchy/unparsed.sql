-- Unread answers (ok rows whose prediction is NULL: nothing could be read, or the model refused):
-- their share beside every score, and how far they move it. Created after views.sql
-- (store/hierarchy/views.py); docs/extraction.md. An unread answer scores as wrong in accuracy-like
-- metrics (questionnaires leave it out), so a model's score partly measures its answer style.

-- A primary metric's value from per-item inputs, for the kinds whose value is a plain
-- aggregate of them (NULL for the others: bias_score, balance, macro_f1, icat).
CREATE OR REPLACE MACRO unparsed_metric_value(kind, a, b, c) AS
    CASE kind
        WHEN 'mean' THEN avg(a)
        WHEN 'ratio' THEN sum(a) / nullif(sum(b), 0)
        WHEN 'micro_f1' THEN 2 * sum(a) / nullif(2 * sum(a) + sum(b) + sum(c), 0)
        WHEN 'label_f1' THEN 2 * sum(a) / nullif(2 * sum(a) + sum(b) + sum(c), 0)
        WHEN 'play_mean' THEN avg(a)
        WHEN 'play_ratio' THEN sum(a) / nullif(sum(b), 0)
    END;

-- Per (model, dataset), on the primary metric: the value over every ok answer and over the
-- read ones only; delta_points = 100 x (read only - all). flagged_share: more than 5 % of the
-- answers unread; flagged_moves: the score moves by more than a point without them.
CREATE OR REPLACE VIEW unparsed_effect AS
WITH v AS (
    SELECT model, dataset, metric, any_value(kind) AS kind,
           count(*) AS n_ok,
           count(*) FILTER (WHERE NOT parsed) AS n_unparsed,
           unparsed_metric_value(any_value(kind), a, b, c) AS value_all,
           unparsed_metric_value(any_value(kind), CASE WHEN parsed THEN a END, CASE WHEN parsed THEN b END,
                                 CASE WHEN parsed THEN c END) AS value_read
    FROM metric_inputs
    WHERE is_primary
    GROUP BY model, dataset, metric
)
SELECT *, n_unparsed / n_ok AS unparsed_share,
       100 * (value_read - value_all) AS delta_points,
       n_unparsed / n_ok > 0.05 AS flagged_share,
       coalesce(abs(100 * (value_read - value_all)) > 1, false) AS flagged_moves
FROM v;

-- The (model, dataset)s to look at (what `report` warns about).
CREATE OR REPLACE VIEW unparsed_flags AS
SELECT * FROM unparsed_effect WHERE flagged_share OR flagged_moves;

-- Beside the leaderboard, per (suite, model): the mean and the worst share of unread answers
-- over the suite's datasets with item rows, and how many datasets are flagged.
CREATE OR REPLACE VIEW model_unparsed AS
SELECT d.suite, d.version, d.model,
       avg(d.unparsed_share) AS mean_unparsed_share,
       max(d.unparsed_share) AS worst_unparsed_share,
       arg_max(d.dataset, d.unparsed_share) AS worst_dataset,
       count(*) FILTER (WHERE e.flagged_share) AS n_flagged_share,
       count(*) FILTER (WHERE e.flagged_moves) AS n_flagged_moves
FROM dataset_scores d
LEFT JOIN unparsed_effect e ON e.model = d.model AND e.dataset = d.dataset
WHERE d.unparsed_share IS NOT NULL
GROUP BY d.suite, d.version, d.model;
