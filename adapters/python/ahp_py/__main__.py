"""Command line: ``python -m ahp_py client|server --config PATH``."""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="ahp_py", description="AHP interop adapter (Python)"
    )
    parser.add_argument("role", choices=("client", "server"))
    parser.add_argument(
        "--config", required=True, help="absolute path of the JSON config"
    )
    args = parser.parse_args(argv)

    from .config import ConfigError
    from .schemas import SchemaError

    try:
        if args.role == "client":
            from .client import run

            return run(args.config)
        from .server import serve

        return serve(args.config)
    except (ConfigError, SchemaError) as exc:
        print(f"ahp_py {args.role}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"ahp_py {args.role}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
