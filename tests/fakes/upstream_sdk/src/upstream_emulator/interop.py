"""Entry point: `interop.py {client,server} --config ABS_PATH` (run from the SDK root)."""

from __future__ import annotations

import sys
from pathlib import Path

USAGE = "usage: interop.py {client,server} --config ABS_PATH"


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("client", "server") or argv[1] != "--config":
        print(USAGE, file=sys.stderr)
        return 2
    # run as a script: import the package from src/, never from this folder
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(here.parent))
    from upstream_emulator import client, server, settings

    try:
        config = settings.load(argv[2])
    except settings.ConfigError as exc:
        print(f"upstream-emulator: {exc}", file=sys.stderr)
        return 2
    role = client.run if argv[0] == "client" else server.run
    return role(config)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
