-- Views over results. Every layer is computed from item rows, so a changed
-- weight or metric definition changes the answer without re-running a model.

-- Per-item values feeding each metric (only `ok` rows: an error is not a wrong answer).
CREATE OR REPLACE VIEW metric_inputs AS
SELECT r.model, r.dataset, d.metric, d.kind, d.is_primary,
       CASE WHEN d.a = 'score' THEN r.score ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.a) AS DOUBLE) END AS a,
       CASE WHEN d.b = 'score' THEN r.score ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.b) AS DOUBLE) END AS b,
       CASE WHEN d.c = 'score' THEN r.score ELSE TRY_CAST(json_extract_string(r.measures, '$.' || d.c) AS DOUBLE) END AS c
FROM results r JOIN dataset_metrics d ON d.dataset = r.dataset
WHERE r.status = 'ok';

-- One value per (model, dataset, metric), on the metric's own scale (0..1 for ratios).
CREATE OR REPLACE VIEW metric_values AS
SELECT model, dataset, metric, any_value(is_primary) AS is_primary, count(*) AS n,
       CASE any_value(kind)
           WHEN 'mean' THEN avg(a)
           WHEN 'ratio' THEN sum(a) / nullif(sum(b), 0)
           WHEN 'micro_f1' THEN 2 * sum(a) / nullif(2 * sum(a) + sum(b) + sum(c), 0)
       END AS value
FROM metric_inputs
GROUP BY model, dataset, metric;

-- Coverage per (model, dataset): planned rows versus rows that succeeded.
CREATE OR REPLACE VIEW dataset_coverage AS
SELECT model, dataset,
       count(*) AS n_items,
       count(*) FILTER (WHERE status = 'ok') AS n_ok,
       count(*) FILTER (WHERE status = 'error') AS n_error,
       count(*) FILTER (WHERE status = 'ok' AND prediction IS NULL) AS n_unparsed,
       count(*) FILTER (WHERE status = 'ok') / count(*) AS coverage
FROM results
GROUP BY model, dataset;

-- Dataset score on 0-100 from the dataset's primary metric.
CREATE OR REPLACE VIEW dataset_scores AS
SELECT c.model, c.dataset, c.n_items, c.n_ok, c.n_error, c.n_unparsed, c.coverage,
       100 * v.value AS score
FROM dataset_coverage c
LEFT JOIN metric_values v ON v.model = c.model AND v.dataset = c.dataset AND v.is_primary;
