import sys

from engine.signals import catch_start_up_signals, signalled

# A signal during start-up (imports, planning) ends quietly with 130, like one during the run;
# the run loop installs its own handlers while it calls models (engine/interrupt.py).
catch_start_up_signals()
try:
    from engine.cli import main

    code = main()
except (KeyboardInterrupt, Exception) as e:
    # After a signal, whatever it cut short is the interruption (DuckDB turns it into a RuntimeError
    # 'Query interrupted' in the middle of a query).
    if not (isinstance(e, KeyboardInterrupt) or signalled()):
        raise
    print("interrupted", file=sys.stderr)
    code = 130
sys.exit(code)
