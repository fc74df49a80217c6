-- Provider batches (engine/lanes/batch/model_lane.py). A batch is recorded before it is submitted (status
-- 'submitting', its label known) and its provider id stored right after the provider created it,
-- before the engine waits on it: a rerun after a crash re-attaches instead of submitting again.

CREATE TABLE IF NOT EXISTS batches (
    label          VARCHAR PRIMARY KEY, -- the engine's key, given to the provider at submission
    run_id         VARCHAR,             -- the sweep that submitted it
    model          VARCHAR NOT NULL,    -- models.toml `name` of the model, [judge] or [extractor] asked
    provider       VARCHAR NOT NULL,    -- 'openai' | 'anthropic' | 'gemini'
    batch_id       VARCHAR,             -- the provider's id; NULL until the provider created it
    status         VARCHAR NOT NULL,    -- 'submitting' | 'running' | 'ended' | 'failed' | 'expired'
                                        -- | 'cancelled' | 'not_submitted' (never reached the provider)
                                        -- | 'stale' (made with other prompts or endpoint: not collected)
    provider_status VARCHAR,            -- the provider's own word (in_progress, finalizing, ...)
    n_requests     INTEGER NOT NULL,
    succeeded      INTEGER,             -- as the provider counts them
    failed         INTEGER,
    stamp          VARCHAR,             -- hash of the requests' prompt stamps and identities: a batch made
                                        -- with other ones is never collected under the current stamps
    est_cost_usd   DOUBLE,              -- upper bound at the batch price, counted by --budget at submission
    submitted_at   TIMESTAMPTZ,
    ended_at       TIMESTAMPTZ,
    collected      BOOLEAN NOT NULL DEFAULT false, -- its outcomes are stored: never read again
    lane           VARCHAR DEFAULT 'model' -- 'model' (answers) | 'judge' (verdicts) | 'extractor' (readings)
);
-- Files made before judges and extractors could be batched: their batches are all the models'.
ALTER TABLE batches ADD COLUMN IF NOT EXISTS lane VARCHAR DEFAULT 'model';

-- Which item each request of a batch carries (the results key: for a judge's or an extractor's
-- batch, the key of the answer it is asked about, `model` being the model that answered).
CREATE TABLE IF NOT EXISTS batch_items (
    label     VARCHAR NOT NULL,
    custom_id VARCHAR NOT NULL,
    model     VARCHAR NOT NULL,
    dataset   VARCHAR NOT NULL,
    item_id   VARCHAR NOT NULL,
    sample    INTEGER NOT NULL,
    PRIMARY KEY (label, custom_id)
);
