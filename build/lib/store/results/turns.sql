-- Episodes of interactive datasets, message by message (engine/lanes/episode.py; docs/interactive.md).
-- Each call of an episode lands here when it returns (the companion's reply, the simulator's seeker
-- message); the episode's `results` row is written when it ends. Resume continues an unfinished
-- episode after its last `ok` turn, so no stored turn is asked again.
CREATE TABLE IF NOT EXISTS turns (
    model          VARCHAR NOT NULL,   -- the companion (the evaluated model)
    dataset        VARCHAR NOT NULL,
    item_id        VARCHAR NOT NULL,   -- the scenario
    sample         INTEGER NOT NULL,   -- the play (samples = k: k plays with their own seeds)
    session        INTEGER NOT NULL,   -- 0-based
    turn           INTEGER NOT NULL,   -- exchange within the session; 0: the seeker's opening
    role           VARCHAR NOT NULL,   -- 'companion' | 'seeker'
    status         VARCHAR NOT NULL,   -- 'ok' | 'blocked' (the companion refused, or a content filter) |
                                       -- 'unreadable' (the simulator's reply could not be read, after retries) |
                                       -- 'error' (the call failed). Only ok and blocked are kept on resume.
    content        VARCHAR,            -- what was said (the seeker's `reply`); the raw reply when unreadable
    emotion        INTEGER,            -- seeker: 0-100 after the companion's reply (SAGE's scale)
    reason         VARCHAR,            -- seeker: why it feels so
    ended          BOOLEAN,            -- seeker: said the conversation is over
    error_class    VARCHAR,
    error          VARCHAR,
    attempts       INTEGER NOT NULL,   -- calls made for this turn, summed over runs (unreadable retries too)
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    latency_ms     DOUBLE,
    speaker        VARCHAR NOT NULL,   -- who answered: the model's name, or the [user_simulator]'s
    model_version  VARCHAR,            -- what its API reported
    prompt_hash    VARCHAR NOT NULL,   -- the dataset's prompt stamp (companion) / the seeker prompt version
    identity       VARCHAR,            -- identities.identity of what answered (engine/sweep/identity.py)
    run_id         VARCHAR,
    started_at     TIMESTAMPTZ,
    finished_at    TIMESTAMPTZ,
    PRIMARY KEY (model, dataset, item_id, sample, session, turn, role)
);

-- One row per episode played (or being played): its length and emotion path, beside its results row.
CREATE OR REPLACE VIEW episodes AS
SELECT t.model, t.dataset, t.item_id, t.sample,
       count(*) FILTER (WHERE t.role = 'companion' AND t.status = 'ok') AS exchanges,
       max(t.session) + 1 AS sessions,
       arg_max(t.emotion, (t.session, t.turn)) FILTER (WHERE t.role = 'seeker' AND t.status = 'ok'
                                                      AND t.emotion IS NOT NULL) AS final_emotion,
       arg_min(t.emotion, (t.session, t.turn)) FILTER (WHERE t.role = 'seeker' AND t.status = 'ok'
                                                      AND t.emotion IS NOT NULL) AS first_emotion,
       list(t.emotion ORDER BY t.session, t.turn) FILTER (WHERE t.role = 'seeker' AND t.status = 'ok')
           AS emotion_curve,
       count(*) FILTER (WHERE t.status = 'blocked') AS blocked_turns,
       count(*) FILTER (WHERE t.status = 'unreadable') AS simulator_errors,
       count(*) FILTER (WHERE t.status = 'error') AS call_errors,
       any_value(r.status) AS result_status,
       any_value(r.blocked) AS blocked,
       any_value(r.score) * 100 AS score,
       any_value(r.status) IS NOT NULL AS finished
FROM turns t
LEFT JOIN results r USING (model, dataset, item_id, sample)
GROUP BY t.model, t.dataset, t.item_id, t.sample;

-- Per model and interactive dataset: episodes (plays) and their outcomes (the dataset's score is the
-- existing dataset_scores, from the episodes' results rows: each scenario's plays averaged, then the
-- scenarios; benchmark/metrics/kinds.py PLAY_KINDS). mean_score averages the plays themselves.
CREATE OR REPLACE VIEW episode_summary AS
SELECT model, dataset,
       count(*) AS episodes,
       count(DISTINCT item_id) AS scenarios,
       count(*) FILTER (WHERE finished AND result_status = 'ok') AS finished,
       count(*) FILTER (WHERE blocked IS NOT NULL) AS blocked,
       sum(simulator_errors) AS simulator_errors,
       sum(exchanges) AS exchanges,
       avg(final_emotion) AS mean_final_emotion,
       avg(score) AS mean_score
FROM episodes
GROUP BY model, dataset;
