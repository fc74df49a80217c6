-- Estimates of a model's dataset scores from a random fraction of the items (docs/estimates.md),
-- written by store/estimates/scores.py: compute_estimates(con). Created by store/hierarchy/views.py:ensure_views, before
-- the views: dataset_scores reads dataset_estimates.

-- One 2PL fit per dataset (store/stats/item_model.py), on the models that answered (nearly) all of its
-- items. `stamp` is a hash of exactly those rows (models, items, scores): a fit is redone when it
-- changes, and kept when only other models' rows come and go.
CREATE TABLE IF NOT EXISTS item_fits (
    dataset    VARCHAR PRIMARY KEY,
    stamp      VARCHAR NOT NULL,
    models     VARCHAR[] NOT NULL,   -- the models it was fitted on
    n_items    INTEGER NOT NULL,     -- the population: every item with an ok row for some model
    n_rows     INTEGER NOT NULL,     -- item scores it was fitted on
    rounds     INTEGER,              -- alternating Newton rounds to converge
    fitted_at  TIMESTAMPTZ
);

-- P(right) = sigmoid(discrimination * (ability - difficulty)) = sigmoid(discrimination * ability + intercept).
CREATE TABLE IF NOT EXISTS item_params (
    dataset        VARCHAR NOT NULL,
    item_id        VARCHAR NOT NULL,
    discrimination DOUBLE NOT NULL,
    intercept      DOUBLE NOT NULL,
    difficulty     DOUBLE,           -- -intercept / discrimination; NULL when discrimination is ~0
    PRIMARY KEY (dataset, item_id)
);

-- The abilities of the models a fit was made on (mean 0, sd 1 per dataset).
CREATE TABLE IF NOT EXISTS item_abilities (
    dataset VARCHAR NOT NULL,
    model   VARCHAR NOT NULL,
    ability DOUBLE NOT NULL,
    PRIMARY KEY (dataset, model)
);

-- The latest estimates, per (model, dataset) the model answered part of. On the dataset's
-- 0-100 scale (100 x the mean item score over the population). method: 'model-assisted'
-- (the cross-fitted difference estimator) or 'mean' (too few fitted models: the answered mean).
CREATE TABLE IF NOT EXISTS estimates (
    model       VARCHAR NOT NULL,
    dataset     VARCHAR NOT NULL,
    estimate    DOUBLE NOT NULL,
    ci_low      DOUBLE NOT NULL,
    ci_high     DOUBLE NOT NULL,
    n           INTEGER NOT NULL,    -- items this model answered (ok rows)
    n_total     INTEGER NOT NULL,    -- items in the population
    method      VARCHAR NOT NULL,
    signature   VARCHAR NOT NULL,    -- estimate_signature() of the results it was computed from
    computed_at TIMESTAMPTZ,
    PRIMARY KEY (model, dataset)
);

-- How the last computation predicted items (store/stats/estimator.py: Blend), for reading.
CREATE TABLE IF NOT EXISTS estimate_state (
    kappa       DOUBLE,
    alpha       DOUBLE,
    cv_loss     DOUBLE,   -- mean squared error of the blend on the cross-validation's held-back items
    cv_loss_2pl DOUBLE,   -- the same, 2PL alone
    cv_loss_mean DOUBLE,  -- the same, the answered mean
    seconds     DOUBLE,
    computed_at TIMESTAMPTZ
);

-- Every ok item score (the estimator's input): an estimate is stale once it changes.
CREATE OR REPLACE MACRO estimate_signature() AS (
    SELECT count(*) || ':' || coalesce(bit_xor(hash(model, dataset, item_id, sample, score)), 0)
    FROM results WHERE status = 'ok' AND score IS NOT NULL
);

-- The estimates that still hold for the stored rows (the command `estimate` refreshes them).
CREATE OR REPLACE VIEW dataset_estimates AS
SELECT model, dataset, estimate, ci_low, ci_high, n, n_total, method, computed_at
FROM estimates
WHERE signature = estimate_signature();
