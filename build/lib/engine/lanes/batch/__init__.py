"""Lanes asked through provider batch APIs: the shared core, the request bodies, the model's batch lane and a
side lane's batches.

Entry point: `engine.lanes.batch.core.BatchCore` (record, submit, poll, collect, retry).
"""
