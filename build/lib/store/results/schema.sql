-- The public query interface of results.duckdb (documented in README.md).
-- One row per (model, dataset, item_id, sample). The table is at once the
-- resume ledger and the response cache: an `ok` row is never asked again.

CREATE TABLE IF NOT EXISTS results (
    model          VARCHAR NOT NULL,   -- models.toml `name`
    dataset        VARCHAR NOT NULL,   -- dataset id, e.g. 'sst2'
    item_id        VARCHAR NOT NULL,   -- stable id inside the dataset
    sample         INTEGER NOT NULL,   -- 0 unless a dataset asks for repeated samples
    status         VARCHAR NOT NULL,   -- 'ok' | 'error' (a refusal or safety block is 'ok': see `blocked`)
    error_class    VARCHAR,            -- 'rate_limit' | 'transient' | 'connect' | 'permanent' | 'context_length' | 'scorer' (error rows)
    error          VARCHAR,            -- message, never containing a secret
    attempts       INTEGER NOT NULL,   -- HTTP attempts spent on this row, summed over runs
    response       VARCHAR,            -- raw model text
    prediction     JSON,               -- parsed answer; NULL when nothing could be parsed
    gold           JSON,
    score          DOUBLE,             -- the item's primary score (0..1 for accuracy-like metrics)
    measures       JSON,               -- other named per-item values that metrics aggregate (tp/fp/fn ...)
    latency_ms     DOUBLE,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    model_version  VARCHAR,            -- as the API reported it
    prompt_hash    VARCHAR,            -- hash of the dataset's prompt template and generation settings
    suite_version  VARCHAR,
    scorer_version VARCHAR,
    started_at     TIMESTAMPTZ,
    finished_at    TIMESTAMPTZ,
    finish_reason  VARCHAR,            -- as the API reported it (stop, length, end_turn, STOP, SAFETY ...)
    blocked        VARCHAR,            -- set when the model refused or a safety filter blocked the answer:
                                       -- 'refusal', 'content_filter', 'prompt:SAFETY', 'SAFETY', 'sensitive' ...
                                       -- (response is then empty and scored as unparsed; never retried)
    cost_usd       DOUBLE,             -- input/output tokens x the model's price in models.toml (NULL: no price)
    run_id         VARCHAR,            -- the sweep (runs.run_id) that produced this row
    identity       VARCHAR,            -- who answered: identities.identity (NULL: made before identity stamps)
    extracted_by   VARCHAR,            -- who read `prediction` from the response: 'rules' (the dataset's
                                       -- parser) | 'model' (the [extractor] model, docs/extraction.md);
                                       -- NULL when nothing was read (unparsed) or on error rows
    PRIMARY KEY (model, dataset, item_id, sample)
);

-- Files made before these columns existed get them (appended, in this order).
ALTER TABLE results ADD COLUMN IF NOT EXISTS finish_reason VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS blocked VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS cost_usd DOUBLE;
ALTER TABLE results ADD COLUMN IF NOT EXISTS run_id VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS identity VARCHAR;
ALTER TABLE results ADD COLUMN IF NOT EXISTS extracted_by VARCHAR;

-- What answered a row (engine/sweep/identity.py): provider, base_url (never credentials), model id,
-- context_tokens, the dataset's derivation hash. A resume with another identity stops.
CREATE TABLE IF NOT EXISTS identities (
    identity VARCHAR PRIMARY KEY,
    detail   JSON NOT NULL
);

-- What each model is, as models.toml described it (secrets never stored).
CREATE TABLE IF NOT EXISTS models (
    name       VARCHAR PRIMARY KEY,
    provider   VARCHAR NOT NULL,
    base_url   VARCHAR,
    model_id   VARCHAR NOT NULL,
    metadata   JSON,
    generation JSON,
    updated_at TIMESTAMPTZ
);

-- How each dataset turns item rows into metric values. Written by the sweep
-- from the dataset adapters; read by the views. `kind` is a name of the registry
-- benchmark/metrics/kinds.py (its SQL and Python reference), e.g.
--   kind 'mean'     : avg(a)                       (accuracy, token F1, ROUGE ...)
--   kind 'ratio'    : sum(a) / sum(b)
--   kind 'micro_f1' : 2*sum(a) / (2*sum(a) + sum(b) + sum(c))   with a,b,c = tp,fp,fn
-- a/b/c name a key of `measures`, or the literal 'score' for the score column.
CREATE TABLE IF NOT EXISTS dataset_metrics (
    dataset        VARCHAR NOT NULL,
    metric         VARCHAR NOT NULL,
    kind           VARCHAR NOT NULL,
    a              VARCHAR NOT NULL,
    b              VARCHAR,
    c              VARCHAR,
    is_primary     BOOLEAN NOT NULL,
    scorer_version VARCHAR NOT NULL,
    PRIMARY KEY (dataset, metric)
);

-- How many rows the latest sweep planned per (model, dataset): items x samples at its --limit.
CREATE TABLE IF NOT EXISTS planned_items (
    model      VARCHAR NOT NULL,
    dataset    VARCHAR NOT NULL,
    planned    INTEGER NOT NULL,
    updated_at TIMESTAMPTZ,
    PRIMARY KEY (model, dataset)
);

-- One row per sweep invocation, for provenance.
CREATE TABLE IF NOT EXISTS runs (
    run_id      VARCHAR PRIMARY KEY,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    command     VARCHAR,
    engine_version VARCHAR,
    suite       VARCHAR,
    suite_version VARCHAR,
    outcome     VARCHAR
);
