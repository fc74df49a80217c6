"""The tables of the other lanes and commands: judgements and extractions (the side lanes), provider
batches, the cluster's units and landed files, CompactBench's runs. Each module owns its SQL file.

Entry: each module's ``ensure_*_tables`` (and its writes). Imports of store: the top's primitives and
``results`` (the rows a helper's answers go with).
"""
