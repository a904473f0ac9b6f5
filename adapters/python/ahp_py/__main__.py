"""Command line: ``python -m ahp_py ROLE --config PATH``.

Roles come from ``ROLES``: a suite adds its module under ``suites/`` and one row
here. Exit codes: 0 the role did its job, 2 the config is unusable (one stderr
line names the file and the field), 1 any other failure.
"""

from __future__ import annotations

import sys
import traceback

# role -> (module under ahp_py, function taking the config path and returning the exit code)
ROLES: dict[str, tuple[str, str]] = {
    "client": ("suites.core", "run_client"),
    "server": ("suites.core", "serve"),
    "replay": ("suites.core", "replay"),
    "lifecycle-client": ("suites.lifecycle", "run_client"),
    "lifecycle-server": ("suites.lifecycle", "serve"),
}


def main(argv: list[str]) -> int:
    import argparse
    import importlib

    parser = argparse.ArgumentParser(prog="ahp_py", description="AHP interop adapter (Python)")
    parser.add_argument("role", choices=sorted(ROLES))
    parser.add_argument("--config", required=True, help="absolute path of the JSON config")
    args = parser.parse_args(argv)

    from .contract.config import ConfigError

    module_name, function_name = ROLES[args.role]
    try:
        module = importlib.import_module(f"{__package__ or 'ahp_py'}.{module_name}")
        status: int = getattr(module, function_name)(args.config)
        return status
    except ConfigError as exc:
        print(f"ahp_py {args.role}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(f"ahp_py {args.role}: {type(exc).__name__}: {exc}", file=sys.stderr)
        traceback.print_exc(file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
