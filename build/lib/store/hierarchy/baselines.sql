-- Chance and majority baselines: what a uniformly random answer and the
-- commonest answer score on each dataset, so a reader sees score above chance.
-- Written by the sweep from the dataset adapters (store/results/runs.py:record_baselines),
-- on the scale of the dataset's primary metric (0..1 for accuracy).
CREATE TABLE IF NOT EXISTS dataset_baselines (
    dataset  VARCHAR PRIMARY KEY,
    chance   DOUBLE,   -- NULL: the adapter declares none
    majority DOUBLE
);

-- The baselines on the 0-100 scale of dataset_scores: each method's normalization
-- applied to the primary metric's baseline, weighted like method_scores ->
-- dataset_scores. Only where every method of the dataset scores the primary metric
-- with a value normalization: a baseline of another metric, or of a graded
-- label, is not declared, so the dataset gets no row rather than a wrong one.
CREATE OR REPLACE VIEW suite_dataset_baselines AS
SELECT m.suite, m.version, m.dataset,
       sum(m.weight * normalized_score(m.normalization, b.chance, m.lo, m.hi)) / nullif(sum(m.weight), 0) AS chance,
       sum(m.weight * normalized_score(m.normalization, b.majority, m.lo, m.hi)) / nullif(sum(m.weight), 0)
           AS majority
FROM suite_methods_resolved m
JOIN dataset_metrics p ON p.dataset = m.dataset AND p.is_primary
JOIN dataset_baselines b ON b.dataset = m.dataset
GROUP BY m.suite, m.version, m.dataset
HAVING bool_and(m.metric = p.metric AND m.normalization <> 'grade');

-- Each dataset score beside its baselines: above_chance = score - chance (NULL
-- where the dataset has no baseline on its score's scale).
CREATE OR REPLACE VIEW dataset_vs_baseline AS
SELECT s.suite, s.version, s.model, s.dataset, s.score, b.chance, b.majority,
       s.score - b.chance AS above_chance, s.score - b.majority AS above_majority, s.source
FROM dataset_scores s
LEFT JOIN suite_dataset_baselines b ON b.suite = s.suite AND b.version = s.version AND b.dataset = s.dataset;
