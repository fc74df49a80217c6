"""benchmark/: datasets, suites and scoring, importing no other package of the project.

On top, the dataset contract and what every adapter uses: ``dataset`` (the ``Dataset`` protocol and its
records: the entry), ``registry`` (id -> adapter), ``loaders`` and ``sources`` (files under
``--data-dir`` and where they come from), ``sampling``, ``context`` (fitting a prompt to a window),
``names``, ``errors``. Wings:

- ``adapters/``: the generic adapters a dataset declares itself with (choice, free text, questionnaires,
  split datasets, judge rubrics, maths answers)
- ``datasets/``: one small declaration per dataset
- ``extract/``: reading the answer of a choice question (entry: ``extract.choice.extract_single``)
- ``metrics/``: per-item scores, text overlap, and the aggregation kinds the views run
- ``suites/``: suites as data (TOML) and their loading (entry: ``suites.suite.load_suite``)
- ``episodes/``: dialogues with a simulated help-seeker as items
- ``compactbench/``: CompactBench's cases, compactors and scorer
"""
