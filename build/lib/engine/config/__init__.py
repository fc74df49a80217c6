"""models.toml as typed structs, validated as a whole before the first call.

Entry point: `engine.config.load.load_models`. `models.py`: the file's records (ModelConfig, Account,
Price, SweepDefaults for the [sweep] table, ModelsFile; `base_url`, `public_url`); `checks.py`: the
checks a file must pass; `load.py`: reading and converting it, errors naming the file and key.
May import: `engine.errors` (and providers' registry, benchmark).
"""
