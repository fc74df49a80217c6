-- Judge verdicts on the answers in `results` (engine/lanes/judge.py, benchmark/adapters/judges.py; docs/judges.md).
-- Created before views.sql, whose metric_values reads judge_metric_values.

-- One row per judged answer and judge. A verdict belongs to one answer: answer_md5 is
-- md5 of the judged response, so an answer asked again (and changed) is judged again.
CREATE TABLE IF NOT EXISTS judgements (
    model            VARCHAR NOT NULL,   -- whose answer (results.model)
    dataset          VARCHAR NOT NULL,
    item_id          VARCHAR NOT NULL,
    sample           INTEGER NOT NULL,
    judge            VARCHAR NOT NULL,   -- models.toml [judge] name
    rubric           VARCHAR NOT NULL,   -- rubric name-version: prompt template and parsing
    answer_md5       VARCHAR NOT NULL,   -- md5(results.response) of the judged answer
    status           VARCHAR NOT NULL,   -- 'ok' | 'empty' | 'unparsed' | 'refused' | 'unjudgeable' | 'error'
                                         -- ok: the judge's verdict; empty: nothing to judge (the answer was
                                         -- empty), the rubric's lowest verdict, judge not asked; unparsed /
                                         -- refused: the judge's reply is not a verdict (raw kept, excluded,
                                         -- counted); unjudgeable: not asked, see reason; error: the call
                                         -- failed (retried on the next run). Only ok and empty count.
    reason           VARCHAR,            -- the judge's short reason, or why there is no verdict
    error_class      VARCHAR,            -- error rows: rate_limit | transient | permanent | judge
    verdict          JSON,               -- parsed fields, e.g. {"completeness": 4, ..., "score": 3.75}
    score            DOUBLE,             -- the item's judge score on the rubric's scale
    raw              VARCHAR,            -- the judge's reply, as received
    prompt_truncated BOOLEAN,            -- the source in the judge's prompt was cut to fit its context
    attempts         INTEGER NOT NULL,   -- HTTP attempts, summed over runs
    latency_ms       DOUBLE,
    input_tokens     INTEGER,
    output_tokens    INTEGER,
    judge_version    VARCHAR,            -- the model name the judge's API reported
    run_id           VARCHAR,
    started_at       TIMESTAMPTZ,
    finished_at      TIMESTAMPTZ,
    PRIMARY KEY (model, dataset, item_id, sample, judge)
);

-- What models.toml's [judge] said (never its key).
CREATE TABLE IF NOT EXISTS judges (
    judge          VARCHAR PRIMARY KEY,
    provider       VARCHAR NOT NULL,
    base_url       VARCHAR,
    model_id       VARCHAR NOT NULL,
    generation     JSON,
    context_tokens INTEGER,
    updated_at     TIMESTAMPTZ
);

-- How verdicts aggregate into a dataset's judge metrics (kind 'mean' over a verdict field,
-- or 'score' for the score column). `judge` is the judge whose verdicts count, set by the
-- latest sweep that had one (NULL: declared, never judged).
CREATE TABLE IF NOT EXISTS judge_metrics (
    dataset VARCHAR NOT NULL,
    metric  VARCHAR NOT NULL,
    kind    VARCHAR NOT NULL,
    field   VARCHAR NOT NULL,
    rubric  VARCHAR NOT NULL,
    judge   VARCHAR,
    PRIMARY KEY (dataset, metric)
);

-- The verdicts that count: by the dataset's current judge and rubric, on the answer stored now.
CREATE OR REPLACE VIEW current_judgements AS
SELECT j.*
FROM judgements j
JOIN (SELECT DISTINCT dataset, rubric, judge FROM judge_metrics) m
     ON m.dataset = j.dataset AND m.rubric = j.rubric AND m.judge = j.judge
JOIN results r ON r.model = j.model AND r.dataset = j.dataset AND r.item_id = j.item_id AND r.sample = j.sample
     AND r.status = 'ok' AND md5(coalesce(r.response, '')) = j.answer_md5;

-- Per-item judge values of each judge metric (kind 'mean' over a verdict field, or the
-- score column); per item so the bootstrap (store/hierarchy/bootstrap.py) can resample them.
CREATE OR REPLACE VIEW judge_metric_inputs AS
SELECT model, dataset, item_id, metric, v, sample
FROM (
    SELECT j.model, j.dataset, j.item_id, m.metric, j.sample,
           CASE WHEN m.field = 'score' THEN j.score
                ELSE TRY_CAST(json_extract_string(j.verdict, '$.' || m.field) AS DOUBLE) END AS v
    FROM current_judgements j JOIN judge_metrics m ON m.dataset = j.dataset AND m.rubric = j.rubric
    WHERE j.status IN ('ok', 'empty') AND m.kind = 'mean'
)
WHERE v IS NOT NULL;

-- Judge metrics in the shape of metric_values (which appends them).
CREATE OR REPLACE VIEW judge_metric_values AS
SELECT model, dataset, metric, false AS is_primary, count(v) AS n, avg(v) AS value
FROM judge_metric_inputs
GROUP BY model, dataset, metric;

-- Judge quality per (judge, dataset), over every model's ok answers: how many were judged,
-- how many replies could not be read (unparsed_share: of the judge's replies), refused,
-- left unjudged with a reason, failed, or are still pending (no current judgement).
CREATE OR REPLACE VIEW judge_quality AS
WITH answers AS (
    SELECT r.model, r.dataset, r.item_id, r.sample, md5(coalesce(r.response, '')) AS h, m.judge, m.rubric
    FROM results r
    JOIN (SELECT DISTINCT dataset, rubric, judge FROM judge_metrics WHERE judge IS NOT NULL) m
         ON m.dataset = r.dataset
    WHERE r.status = 'ok'
), joined AS (
    SELECT a.judge, a.dataset, a.rubric, j.status, j.prompt_truncated
    FROM answers a
    LEFT JOIN judgements j ON j.model = a.model AND j.dataset = a.dataset AND j.item_id = a.item_id
         AND j.sample = a.sample AND j.judge = a.judge AND j.rubric = a.rubric AND j.answer_md5 = a.h
)
SELECT judge, dataset, any_value(rubric) AS rubric,
       count(*) AS n_answers,
       count(*) FILTER (WHERE status = 'ok') AS n_ok,
       count(*) FILTER (WHERE status = 'empty') AS n_empty,
       count(*) FILTER (WHERE status = 'unparsed') AS n_unparsed,
       count(*) FILTER (WHERE status = 'refused') AS n_refused,
       count(*) FILTER (WHERE status = 'unjudgeable') AS n_unjudgeable,
       count(*) FILTER (WHERE status = 'error') AS n_error,
       count(*) FILTER (WHERE status IS NULL) AS n_pending,
       count(*) FILTER (WHERE status = 'unparsed')
           / nullif(count(*) FILTER (WHERE status IN ('ok', 'unparsed', 'refused')), 0) AS unparsed_share,
       count(*) FILTER (WHERE status = 'refused')
           / nullif(count(*) FILTER (WHERE status IN ('ok', 'unparsed', 'refused')), 0) AS refused_share,
       count(*) FILTER (WHERE prompt_truncated) AS n_source_cut
FROM joined
GROUP BY judge, dataset;

-- Position bias of a pairwise choice (PersonaFeedback): items asked in both orders
-- (sample 0, and sample 1 with the answers swapped, measure `swap`). agreement = share
-- of pairs, both answered, where the same answer was picked in both orders (1: no
-- position effect; with two options, 1 - agreement is the share picking one position twice).
CREATE OR REPLACE VIEW position_consistency AS
SELECT a.model, a.dataset,
       count(*) AS n_pairs,
       count(*) FILTER (WHERE a.prediction IS NOT NULL AND b.prediction IS NOT NULL) AS n_answered,
       avg(CASE WHEN a.score = b.score THEN 1.0 ELSE 0.0 END)
           FILTER (WHERE a.prediction IS NOT NULL AND b.prediction IS NOT NULL) AS agreement,
       avg(a.score) AS accuracy_first_order,
       avg(b.score) AS accuracy_swapped_order
FROM results a
JOIN results b ON b.model = a.model AND b.dataset = a.dataset AND b.item_id = a.item_id AND b.sample = 1
WHERE a.sample = 0 AND a.status = 'ok' AND b.status = 'ok'
  AND json_extract_string(b.measures, '$.swap') IS NOT NULL
GROUP BY a.model, a.dataset;
