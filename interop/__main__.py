"""`python -m interop` (and the `ahp-interop` command).

Every terminating signal means "stop" from the first instruction on: before
the command line is even parsed, SIGINT, SIGTERM and SIGHUP raise
KeyboardInterrupt (also when the shell that started us ignored SIGINT, as a
non-interactive shell does for background jobs), and `interop.cli` then
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
        return cli_main()
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
