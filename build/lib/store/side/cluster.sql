-- A sweep on a Ray cluster (engine/cluster/): which node ran each (model, dataset) unit and each
-- attempt, and the landed Parquet files already ingested. Created by the cluster driver only, so a
-- database that never saw a cluster has neither table.
CREATE TABLE IF NOT EXISTS cluster_units (
    run_id      VARCHAR NOT NULL,
    model       VARCHAR NOT NULL,
    dataset     VARCHAR NOT NULL,
    attempt     INTEGER NOT NULL,
    node_id     VARCHAR,
    status      VARCHAR NOT NULL,   -- running | done | unreachable | lost | given_up | interrupted
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    PRIMARY KEY (run_id, model, dataset, attempt)
);

-- One row per landed file, written in the same transaction as its rows: a file is ingested once
-- even when the driver dies between the commit and the file's removal.
CREATE TABLE IF NOT EXISTS landed_files (
    name        VARCHAR PRIMARY KEY,
    rows        INTEGER NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL
);
