"""Entry point: `interop.py ROLE --config ABS_PATH` (run from the SDK root).

Roles: `client` and `server` (core), `lifecycle-client` and `lifecycle-server`
(the lifecycle and catalogue suites, chosen by the config's `suite`).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROLES = ("client", "server", "lifecycle-client", "lifecycle-server")
USAGE = f"usage: interop.py {{{','.join(ROLES)}}} --config ABS_PATH"


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ROLES or argv[1] != "--config":
        print(USAGE, file=sys.stderr)
        return 2
    # run as a script: import the package from src/, never from this folder
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(here.parent))
    from upstream_emulator import client, lifecycle_client, lifecycle_server, server, settings

    try:
        config = settings.load(argv[2])
    except settings.ConfigError as exc:
        print(f"upstream-emulator: {exc}", file=sys.stderr)
        return 2
    roles = {
        "client": client.run,
        "server": server.run,
        "lifecycle-client": lifecycle_client.run,
        "lifecycle-server": lifecycle_server.run,
    }
    return roles[argv[0]](config)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
