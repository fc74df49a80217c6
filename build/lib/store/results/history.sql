-- Re-scoring (`python -m engine rescore`, engine/sweep/rescore.py): stored responses read again with the
-- current extractor and scorers. Rows are updated in place; the values they replace are kept here.

-- One row per rescore invocation.
CREATE TABLE IF NOT EXISTS rescores (
    rescore_id  VARCHAR PRIMARY KEY,
    started_at  TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    command     VARCHAR,            -- the arguments given
    n_rows      INTEGER,            -- ok rows read again
    n_changed   INTEGER,            -- rows whose values changed (their old values are in results_history)
    outcome     VARCHAR             -- 'running' | 'complete' | 'interrupted'
);

-- The values a rescore replaced, one row per changed results row and rescore.
CREATE TABLE IF NOT EXISTS results_history (
    rescore_id     VARCHAR NOT NULL,
    replaced_at    TIMESTAMPTZ NOT NULL,
    model          VARCHAR NOT NULL,
    dataset        VARCHAR NOT NULL,
    item_id        VARCHAR NOT NULL,
    sample         INTEGER NOT NULL,
    prediction     JSON,
    score          DOUBLE,
    measures       JSON,
    scorer_version VARCHAR,
    extracted_by   VARCHAR,
    PRIMARY KEY (rescore_id, model, dataset, item_id, sample)
);
