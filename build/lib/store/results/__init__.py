"""The results a sweep writes: the `results` rows (schema.sql), runs and models, identity stamps,
re-scoring history, and the resume queries over them.

Entry: ``store.results.writer.Writer``. Imports of store: the top's primitives (transaction, query,
upsert) only.
"""
