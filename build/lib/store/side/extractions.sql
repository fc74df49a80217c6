-- The [extractor] model's readings of choice answers the rules left unread
-- (engine/lanes/extract_lane.py, benchmark/extract/prompt.py; docs/extraction.md).

-- One row per asked answer and extractor. A reading belongs to one answer (answer_md5 =
-- md5 of the response it read), so an answer asked again and changed is read again.
CREATE TABLE IF NOT EXISTS extractions (
    model            VARCHAR NOT NULL,   -- whose answer (results.model)
    dataset          VARCHAR NOT NULL,
    item_id          VARCHAR NOT NULL,
    sample           INTEGER NOT NULL,
    extractor        VARCHAR NOT NULL,   -- models.toml [extractor] name
    prompt_version   VARCHAR NOT NULL,   -- benchmark.extract.prompt.VERSION: template and reply parsing
    answer_md5       VARCHAR NOT NULL,   -- md5(results.response) of the answer read
    status           VARCHAR NOT NULL,   -- 'ok' (codes read) | 'none' (it replied NONE) | 'unparsed' (its reply
                                         -- was not a bare code list) | 'refused' | 'error' (retried next run)
    codes            JSON,               -- ok: the option codes it read, e.g. ["B"]
    prediction       JSON,               -- ok: the row's prediction, score and measures scored from those
    score            DOUBLE,             -- codes by the dataset's scorer (scorer_version), copied into results
    measures         JSON,
    scorer_version   VARCHAR,
    raw              VARCHAR,            -- the extractor's reply, as received
    error_class      VARCHAR,
    error            VARCHAR,
    attempts         INTEGER NOT NULL,   -- HTTP attempts, summed over runs
    latency_ms       DOUBLE,
    input_tokens     INTEGER,
    output_tokens    INTEGER,
    cost_usd         DOUBLE,             -- tokens x the extractor's price (NULL: no price)
    extractor_version VARCHAR,           -- the model name the extractor's API reported
    run_id           VARCHAR,
    started_at       TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ,
    PRIMARY KEY (model, dataset, item_id, sample, extractor)
);

-- What models.toml's [extractor] said (never its key).
CREATE TABLE IF NOT EXISTS extractors (
    extractor      VARCHAR PRIMARY KEY,
    provider       VARCHAR NOT NULL,
    base_url       VARCHAR,
    model_id       VARCHAR NOT NULL,
    generation     JSON,
    prompt_version VARCHAR NOT NULL,
    updated_at     TIMESTAMPTZ
);
