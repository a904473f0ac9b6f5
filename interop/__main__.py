"""`python -m interop` (and the `ahp-interop` command).

Every terminating signal means "stop" from the first instruction on: before
the command line is even parsed, SIGINT, SIGTERM and SIGHUP raise
KeyboardInterrupt (also when the shell that started us ignored SIGINT, as a
non-interactive shell does for background jobs), and `interop.commands` then
keeps them so for the whole run.
"""

from __future__ import annotations

import gc
import signal
import sys

# The harness allocates parsed JSON by the million and keeps what it judged, in
# trees without cycles: with the default thresholds (700, 10, 10) every suite in
# one run paid 23 full collections of a growing heap, 8.4 s of the harness's
# 56 s of CPU; with these, one young-generation pass in 50,000 allocations and
# no full one, 1.7 s.
GC_THRESHOLDS = (50_000, 20, 100)


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        from interop.cli import main as cli_main

        # a signal while the command line is parsed, before the command keeps its own
        # handling (nothing started yet), ends here too, not in a traceback
        code = cli_main()
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        code = 130
    _forget_interrupt()
    return code


def _forget_interrupt() -> None:
    """CPython (3.11, 3.12) marks a run whose string `exec` ended in KeyboardInterrupt
    as interrupted even when the interrupt was caught (dataclasses and namedtuples
    exec generated code while modules import, so a signal then lands in one), and
    under `python -m` the interpreter then ends itself by SIGINT (exit -2) instead
    of with our code. The mark is cleared when a string exec starts: one here, as
    the last thing, lets the exit code we chose stand (130 after a signal)."""
    exec("None")  # a constant string, run only to clear that mark


if __name__ == "__main__":
    sys.exit(main())
