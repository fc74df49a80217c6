"""Reading the answer of a choice question: strict rules in English and Chinese, and the extractor
model's prompt (docs/extraction.md).

Entry: ``benchmark.extract.choice`` (``extract_single``, ``extract_multi``: what a metric calls);
``prompt`` is the extractor model's side. Imports of benchmark: ``dataset`` only.
"""
