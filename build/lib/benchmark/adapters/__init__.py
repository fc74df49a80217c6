"""The generic adapters a dataset declares itself with: ``mcq`` (choice questions), ``freetext``,
``questionnaire``, ``split`` (two kinds of items), ``judges`` (judge rubrics), ``prompts`` (the answer
sentence), ``mathequiv`` (maths answers).

Entry: the declaration classes (``mcq.ChoiceDataset``, ``freetext.TextDataset``). Imports of benchmark:
the top, ``extract`` and ``metrics``.
"""
