-- CompactBench tables and views (docs/compactbench.md). Created by
-- store/side/compactbench.py: ensure_compactbench(con).
--
-- A run is keyed by (mode, suite, difficulty, model, compactor): `model` is the
-- target model, `compactor` the [[compactbench.compactors]] name. Item and step
-- rows are at once the resume ledger and the cache: an `ok` row is never asked
-- again; an `error` row is excluded from every score and retried.

-- One row per (unit, cycle, item): the target model's answer from the artifact.
CREATE TABLE IF NOT EXISTS compact_items (
    mode           VARCHAR NOT NULL,   -- 'compat' | 'strict'
    model          VARCHAR NOT NULL,
    compactor      VARCHAR NOT NULL,
    case_id        VARCHAR NOT NULL,   -- '<template>:s<seed>:d<difficulty>'
    cycle          INTEGER NOT NULL,   -- 0 .. drift_cycles
    item_key       VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,   -- 'ok' | 'error'
    error_class    VARCHAR,            -- rate_limit | transient | permanent | scorer
    error          VARCHAR,
    attempts       INTEGER NOT NULL,   -- HTTP attempts, summed over runs
    item_type      VARCHAR NOT NULL,
    check_type     VARCHAR,
    response       VARCHAR,            -- stripped, as CompactBench strips it
    score          DOUBLE,             -- 0..1
    weight         DOUBLE,
    violates       BOOLEAN,            -- counts in the contradiction numerator (mode's rule)
    counted        BOOLEAN,            -- counts in the contradiction denominator
    latency_ms     DOUBLE,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    model_version  VARCHAR,
    stamp          VARCHAR NOT NULL,   -- hash of prompts, settings, compactor spec, scorer version
    scorer_version VARCHAR NOT NULL,
    started_at     TIMESTAMPTZ,
    finished_at    TIMESTAMPTZ,
    PRIMARY KEY (mode, model, compactor, case_id, cycle, item_key)
);

-- The steps before a cycle's items: 'continue' (cycles >= 1: the target model's
-- next assistant turn, from the previous artifact) and 'compact' (the artifact).
CREATE TABLE IF NOT EXISTS compact_steps (
    mode            VARCHAR NOT NULL,
    model           VARCHAR NOT NULL,
    compactor       VARCHAR NOT NULL,
    case_id         VARCHAR NOT NULL,
    cycle           INTEGER NOT NULL,
    step            VARCHAR NOT NULL,  -- 'continue' | 'compact'
    status          VARCHAR NOT NULL,
    error_class     VARCHAR,           -- provider classes, or 'compactor' (the method raised / bad artifact)
    error           VARCHAR,
    attempts        INTEGER NOT NULL,
    output          VARCHAR,           -- the continuation text, or the CompactionArtifact JSON
    source_tokens   INTEGER,           -- cl100k_base tokens the artifact replaces (mode's rule)
    artifact_tokens INTEGER,           -- cl100k_base tokens of summary_text + structured_state strings
    calls           INTEGER,           -- model calls the step made
    latency_ms      DOUBLE,
    input_tokens    INTEGER,
    output_tokens   INTEGER,
    model_version   VARCHAR,
    stamp           VARCHAR NOT NULL,
    started_at      TIMESTAMPTZ,
    finished_at     TIMESTAMPTZ,
    PRIMARY KEY (mode, model, compactor, case_id, cycle, step)
);

-- The generated cases (what the plan refers to).
CREATE TABLE IF NOT EXISTS compact_cases (
    mode             VARCHAR NOT NULL,
    case_id          VARCHAR NOT NULL,
    suite            VARCHAR NOT NULL,
    suite_version    VARCHAR NOT NULL,
    template_key     VARCHAR NOT NULL,
    template_version VARCHAR NOT NULL,
    family           VARCHAR NOT NULL,  -- the template's `family`
    family_from_key  VARCHAR NOT NULL,  -- 0.1.0's family: the key without its _v<N> suffix
    seed_group       VARCHAR NOT NULL,
    slot             INTEGER NOT NULL,
    seed             UBIGINT NOT NULL,
    difficulty       VARCHAR NOT NULL,
    n_items          INTEGER NOT NULL,
    n_turns          INTEGER NOT NULL,
    case_tokens      INTEGER NOT NULL,
    PRIMARY KEY (mode, case_id)
);

-- What the latest run of each (mode, suite, difficulty, model, compactor) configured.
CREATE TABLE IF NOT EXISTS compact_runs (
    mode             VARCHAR NOT NULL,
    suite            VARCHAR NOT NULL,
    difficulty       VARCHAR NOT NULL,
    model            VARCHAR NOT NULL,
    compactor        VARCHAR NOT NULL,
    suite_version    VARCHAR NOT NULL,
    seed_group       VARCHAR NOT NULL,
    case_slots       INTEGER NOT NULL,
    drift_cycles     INTEGER NOT NULL,
    n_templates      INTEGER NOT NULL,
    stamp            VARCHAR NOT NULL,
    compactor_spec   JSON,
    first_started_at TIMESTAMPTZ NOT NULL,  -- the ranking's `published_at` tie-breaker
    started_at       TIMESTAMPTZ NOT NULL,
    finished_at      TIMESTAMPTZ,
    outcome          VARCHAR NOT NULL,      -- 'running' | 'complete' | 'interrupted'
    PRIMARY KEY (mode, suite, difficulty, model, compactor)
);

-- The units of that latest run: scores read only these.
CREATE TABLE IF NOT EXISTS compact_plan (
    mode       VARCHAR NOT NULL,
    suite      VARCHAR NOT NULL,
    difficulty VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    compactor  VARCHAR NOT NULL,
    case_id    VARCHAR NOT NULL,
    PRIMARY KEY (mode, suite, difficulty, model, compactor, case_id)
);

-- The mode switches the views read (benchmark/compactbench/modes.py).
CREATE TABLE IF NOT EXISTS compact_modes (
    mode                VARCHAR PRIMARY KEY,
    drift_on_penalized  BOOLEAN NOT NULL,
    family_from_key     BOOLEAN NOT NULL,
    family_floor_always BOOLEAN NOT NULL,
    require_all_slots   BOOLEAN NOT NULL
);

-- Leaderboard tiers and their compression floors (CompactBench decisions B7).
CREATE OR REPLACE VIEW compact_tiers AS
SELECT * FROM (VALUES ('Elite-Light', 2.0), ('Elite-Mid', 4.0), ('Elite-Aggressive', 8.0)) t(tier, floor);

-- Planned units with their run settings.
CREATE OR REPLACE VIEW compact_units AS
SELECT p.mode, p.suite, p.difficulty, p.model, p.compactor, p.case_id, r.drift_cycles, c.n_items,
       CASE WHEN m.family_from_key THEN c.family_from_key ELSE c.family END AS family
FROM compact_plan p
JOIN compact_runs r USING (mode, suite, difficulty, model, compactor)
JOIN compact_cases c ON c.mode = p.mode AND c.case_id = p.case_id
JOIN compact_modes m ON m.mode = p.mode;

-- One row per (unit, cycle) that has a compaction step. Scores come from `ok`
-- items only; `complete` says whether every item of the cycle is in.
CREATE OR REPLACE VIEW compact_cycle_scores AS
WITH items AS (
    SELECT mode, model, compactor, case_id, cycle, count(*) AS n_ok,
           sum(weight * score) / nullif(sum(weight), 0) AS cycle_score,
           coalesce(count(*) FILTER (WHERE violates) / nullif(count(*) FILTER (WHERE counted), 0), 0.0)
               AS contradiction_rate
    FROM compact_items WHERE status = 'ok'
    GROUP BY ALL
), cycles AS (
    SELECT u.mode, u.suite, u.difficulty, u.model, u.compactor, u.case_id, s.cycle, u.family,
           u.n_items, coalesce(i.n_ok, 0) AS n_items_ok,
           s.status = 'ok' AND coalesce(i.n_ok, 0) = u.n_items AS complete,
           coalesce(i.cycle_score, 0.0) AS cycle_score, coalesce(i.contradiction_rate, 0.0) AS contradiction_rate,
           greatest(0.0, least(1.0, coalesce(i.cycle_score, 0.0) * (1 - coalesce(i.contradiction_rate, 0.0))))
               AS penalized_cycle_score,
           s.source_tokens / greatest(s.artifact_tokens, 1) AS compression_ratio,
           s.source_tokens, s.artifact_tokens
    FROM compact_units u
    JOIN compact_steps s ON s.mode = u.mode AND s.model = u.model AND s.compactor = u.compactor
         AND s.case_id = u.case_id AND s.step = 'compact' AND s.cycle <= u.drift_cycles
    LEFT JOIN items i ON i.mode = u.mode AND i.model = u.model AND i.compactor = u.compactor
         AND i.case_id = u.case_id AND i.cycle = s.cycle
)
SELECT c.*,
       -- What drift compares: 0.1.0 penalized cycle scores, the methodology cycle scores.
       CASE WHEN m.drift_on_penalized THEN penalized_cycle_score ELSE cycle_score END AS drift_basis,
       CASE WHEN cycle > 0 THEN
           (CASE WHEN m.drift_on_penalized THEN penalized_cycle_score ELSE cycle_score END)
           - first_value(CASE WHEN m.drift_on_penalized THEN penalized_cycle_score ELSE cycle_score END)
             OVER (PARTITION BY c.mode, model, compactor, case_id ORDER BY cycle)
       END AS drift_delta
FROM cycles c JOIN compact_modes m ON m.mode = c.mode;

-- One row per planned unit. A case counts in run scores once every cycle is complete.
CREATE OR REPLACE VIEW compact_case_scores AS
SELECT u.mode, u.suite, u.difficulty, u.model, u.compactor, u.case_id, u.family,
       u.drift_cycles + 1 AS n_cycles,
       count(c.cycle) FILTER (WHERE c.complete) AS n_cycles_complete,
       count(c.cycle) FILTER (WHERE c.complete) = u.drift_cycles + 1 AS complete,
       avg(c.penalized_cycle_score) AS case_score,
       greatest(0.0, least(1.0, 1 + coalesce(avg(c.drift_delta), 0.0))) AS drift_resistance
FROM compact_units u
LEFT JOIN compact_cycle_scores c USING (mode, suite, difficulty, model, compactor, case_id)
GROUP BY u.mode, u.suite, u.difficulty, u.model, u.compactor, u.case_id, u.family, u.drift_cycles;

-- Run-level metrics (0.1.0's aggregate_run_metrics), over complete cases only.
CREATE OR REPLACE VIEW compact_run_scores AS
WITH cases AS (
    SELECT mode, suite, difficulty, model, compactor,
           count(*) AS n_cases, count(*) FILTER (WHERE complete) AS n_cases_complete,
           coalesce(avg(case_score) FILTER (WHERE complete), 0.0) AS overall_score,
           coalesce(avg(drift_resistance) FILTER (WHERE complete), 1.0) AS drift_resistance
    FROM compact_case_scores GROUP BY ALL
), cycles AS (
    SELECT c.mode, c.suite, c.difficulty, c.model, c.compactor,
           coalesce(avg(c.contradiction_rate), 0.0) AS contradiction_rate,
           coalesce(avg(c.compression_ratio), 0.0) AS compression_ratio
    FROM compact_cycle_scores c
    SEMI JOIN compact_case_scores k ON k.complete AND k.mode = c.mode AND k.model = c.model
         AND k.compactor = c.compactor AND k.case_id = c.case_id AND k.suite = c.suite AND k.difficulty = c.difficulty
    GROUP BY ALL
), constraints AS (
    SELECT k.mode, k.suite, k.difficulty, k.model, k.compactor, avg(i.score) AS constraint_retention
    FROM compact_case_scores k
    JOIN compact_units u USING (mode, suite, difficulty, model, compactor, case_id)
    JOIN compact_items i ON i.mode = k.mode AND i.model = k.model AND i.compactor = k.compactor
         AND i.case_id = k.case_id AND i.cycle <= u.drift_cycles AND i.status = 'ok'
    WHERE k.complete AND i.item_type IN ('locked_decision_retention', 'forbidden_behavior_retention')
    GROUP BY ALL
), item_errors AS (  -- outstanding failures: error rows not yet retried successfully
    SELECT u.mode, u.suite, u.difficulty, u.model, u.compactor, count(i.item_key) AS item_errors
    FROM compact_units u
    LEFT JOIN compact_items i ON i.status = 'error' AND i.mode = u.mode AND i.model = u.model
         AND i.compactor = u.compactor AND i.case_id = u.case_id AND i.cycle <= u.drift_cycles
    GROUP BY ALL
), step_errors AS (
    SELECT u.mode, u.suite, u.difficulty, u.model, u.compactor, count(s.step) AS step_errors
    FROM compact_units u
    LEFT JOIN compact_steps s ON s.status = 'error' AND s.mode = u.mode AND s.model = u.model
         AND s.compactor = u.compactor AND s.case_id = u.case_id AND s.cycle <= u.drift_cycles
    GROUP BY ALL
)
SELECT r.mode, r.suite, r.suite_version, r.difficulty, r.model, r.compactor,
       a.n_cases, a.n_cases_complete, a.n_cases_complete / a.n_cases AS coverage,
       e.item_errors, f.step_errors,
       a.overall_score, a.drift_resistance,
       coalesce(k.constraint_retention, 0.0) AS constraint_retention,
       coalesce(y.contradiction_rate, 0.0) AS contradiction_rate,
       coalesce(y.compression_ratio, 0.0) AS compression_ratio,
       r.drift_cycles, r.case_slots, r.n_templates, r.first_started_at AS published_at, r.outcome
FROM compact_runs r
JOIN cases a USING (mode, suite, difficulty, model, compactor)
JOIN item_errors e USING (mode, suite, difficulty, model, compactor)
JOIN step_errors f USING (mode, suite, difficulty, model, compactor)
LEFT JOIN cycles y USING (mode, suite, difficulty, model, compactor)
LEFT JOIN constraints k USING (mode, suite, difficulty, model, compactor);

-- Mean case score per family ("pass rate" of the family floor), over complete cases.
CREATE OR REPLACE VIEW compact_family_scores AS
SELECT mode, suite, difficulty, model, compactor, family,
       count(*) FILTER (WHERE complete) AS n_cases_complete,
       avg(case_score) FILTER (WHERE complete) AS pass_rate
FROM compact_case_scores GROUP BY ALL;

-- Per tier: compression bonus, elite score and the qualification floors.
CREATE OR REPLACE VIEW compact_qualification AS
WITH fam AS (
    SELECT mode, suite, difficulty, model, compactor,
           count(*) FILTER (WHERE pass_rate IS NOT NULL) AS n_families,
           list(family || ' ' || printf('%.2f', pass_rate) ORDER BY family) FILTER (WHERE pass_rate < 0.40)
               AS low_families
    FROM compact_family_scores GROUP BY ALL
), scored AS (
    SELECT s.* EXCLUDE (mode, suite, difficulty, model, compactor),
           s.mode, s.suite, s.difficulty, s.model, s.compactor, t.tier, t.floor,
           CASE WHEN s.compression_ratio <= t.floor THEN 0.0
                ELSE greatest(0.0, least(1.0, (s.compression_ratio - t.floor) / t.floor)) END AS compression_bonus,
           s.compression_ratio >= t.floor AS compression_ok,
           s.contradiction_rate <= 0.10 AS contradiction_ok,
           CASE WHEN m.require_all_slots THEN s.n_cases_complete = s.n_cases ELSE s.n_cases_complete > 0 END AS slots_ok,
           CASE WHEN m.require_all_slots THEN s.item_errors + s.step_errors = 0 ELSE TRUE END AS failures_ok,
           CASE WHEN NOT m.family_floor_always AND f.n_families <= 1 THEN TRUE
                ELSE coalesce(len(f.low_families), 0) = 0 END AS family_ok,
           f.low_families
    FROM compact_run_scores s
    CROSS JOIN compact_tiers t
    JOIN compact_modes m ON m.mode = s.mode
    LEFT JOIN fam f ON f.mode = s.mode AND f.suite = s.suite AND f.difficulty = s.difficulty
         AND f.model = s.model AND f.compactor = s.compactor
)
SELECT mode, suite, suite_version, difficulty, model, compactor, tier, floor,
       0.40 * overall_score + 0.30 * drift_resistance + 0.20 * constraint_retention + 0.10 * compression_bonus
           AS elite_score,
       overall_score, drift_resistance, constraint_retention, contradiction_rate, compression_ratio,
       compression_bonus, n_cases, n_cases_complete, published_at,
       compression_ok AND contradiction_ok AND slots_ok AND failures_ok AND family_ok AS qualified,
       concat_ws('; ',
           CASE WHEN NOT compression_ok THEN printf('compression %.2fx is below the %s floor of %.1fx',
                                                    compression_ratio, tier, floor) END,
           CASE WHEN NOT contradiction_ok THEN printf('contradiction_rate %.3f exceeds the 0.10 maximum',
                                                      contradiction_rate) END,
           CASE WHEN NOT slots_ok THEN printf('%d of %d cases complete', n_cases_complete, n_cases) END,
           CASE WHEN NOT failures_ok THEN printf('%d item and %d step failures outstanding',
                                                 item_errors, step_errors) END,
           CASE WHEN NOT family_ok THEN 'family pass rate below 0.40: ' || array_to_string(low_families, ', ') END
       ) AS reasons  -- why it does not qualify ('' when it does)
FROM scored;

-- The leaderboard: per (mode, suite, difficulty, target model, tier), compactors
-- by elite score, then drift resistance, constraint retention, lower
-- contradiction rate, earlier first run. `rank` counts qualified runs only.
-- Keys are rounded to 12 places: sums in another order differ in the last bit,
-- and equal scores must fall through to the next tie-breaker.
CREATE OR REPLACE VIEW compact_ranking AS
SELECT *,
       CASE WHEN qualified THEN rank() OVER (
           PARTITION BY mode, suite, difficulty, model, tier, qualified
           ORDER BY round(elite_score, 12) DESC, round(drift_resistance, 12) DESC,
                    round(constraint_retention, 12) DESC, round(contradiction_rate, 12) ASC, published_at ASC) END AS rank,
       rank() OVER (
           PARTITION BY mode, suite, difficulty, model, tier
           ORDER BY round(elite_score, 12) DESC, round(drift_resistance, 12) DESC,
                    round(constraint_retention, 12) DESC, round(contradiction_rate, 12) ASC, published_at ASC) AS rank_all
FROM compact_qualification;
