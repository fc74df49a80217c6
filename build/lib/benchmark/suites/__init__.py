"""Suites as data: the TOML files beside this package declare the FDAEF hierarchy, weights and
sampling; ``suite`` loads and checks them, ``weights`` reads each dataset's weight off the hierarchy.

Entry: ``suite.load_suite``. Imports of benchmark: ``errors`` only.
"""
