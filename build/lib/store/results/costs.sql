-- Tokens and cost, from the per-item columns of `results` (input_tokens,
-- output_tokens as the API reported them; cost_usd = tokens x the model's
-- price in models.toml, NULL when the model has no price).

-- Per model: everything stored, whatever run produced it.
CREATE OR REPLACE VIEW model_costs AS
SELECT model,
       count(*)                                   AS n_items,
       count(*) FILTER (WHERE status = 'ok')      AS n_ok,
       count(*) FILTER (WHERE blocked IS NOT NULL) AS n_blocked,
       coalesce(sum(input_tokens), 0)             AS input_tokens,
       coalesce(sum(output_tokens), 0)            AS output_tokens,
       sum(cost_usd)                              AS cost_usd,   -- NULL when the model has no price
       sum(cost_usd) / nullif(count(cost_usd), 0) AS cost_per_item_usd
FROM results
GROUP BY model;

-- Per model and dataset.
CREATE OR REPLACE VIEW model_dataset_costs AS
SELECT model, dataset,
       count(*) AS n_items,
       coalesce(sum(input_tokens), 0)  AS input_tokens,
       coalesce(sum(output_tokens), 0) AS output_tokens,
       sum(cost_usd) AS cost_usd
FROM results
GROUP BY model, dataset;

-- Per sweep: the rows each run produced (a retried row belongs to the run that retried it).
CREATE OR REPLACE VIEW sweep_costs AS
SELECT r.run_id, any_value(u.started_at) AS started_at, any_value(u.outcome) AS outcome,
       count(*) AS n_items,
       count(DISTINCT r.model) AS n_models,
       coalesce(sum(r.input_tokens), 0)  AS input_tokens,
       coalesce(sum(r.output_tokens), 0) AS output_tokens,
       sum(r.cost_usd) AS cost_usd
FROM results r
LEFT JOIN runs u USING (run_id)
WHERE r.run_id IS NOT NULL
GROUP BY r.run_id;
