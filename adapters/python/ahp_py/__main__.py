"""Command line: ``python -m ahp_py COMMAND --config PATH``.

Every command runs through the suite registry (``contract/registry.py``): the
core commands run the core suite, the lifecycle commands the suite the
config's ``suite`` names, found in the ``suites`` package's table (a suite
adds its module there, never a row here). Exit codes: 0 the role did its job,
2 the config is unusable (one stderr line names the file and the field), 1 any
other failure.
"""

from __future__ import annotations

import sys
import traceback


def main(argv: list[str]) -> int:
    import argparse

    from .contract import registry

    parser = argparse.ArgumentParser(prog="ahp_py", description="AHP interop adapter (Python)")
    parser.add_argument("role", choices=sorted(registry.COMMANDS))
    parser.add_argument("--config", required=True, help="absolute path of the JSON config")
    args = parser.parse_args(argv)

    from . import suites
    from .contract.config import ConfigError

    try:
        return registry.run(args.role, args.config, suites.find)
    except ConfigError as exc:
        print(f"ahp_py {args.role}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"ahp_py {args.role}: {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
