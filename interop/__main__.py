"""`python -m interop` (and the `ahp-interop` command).

Every terminating signal means "stop" from the first instruction on: before
the command line is even parsed, SIGINT, SIGTERM and SIGHUP raise
KeyboardInterrupt (also when the shell that started us ignored SIGINT, as a
non-interactive shell does for background jobs), and `interop.cli` then
keeps them so for the whole run.
"""

from __future__ import annotations

import signal
import sys


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.default_int_handler)
    try:
        from interop.cli import main as cli_main
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
