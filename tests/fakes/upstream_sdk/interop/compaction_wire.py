"""The emulator's compaction-wire adapter, where contract v1 looks for it by convention.

`compaction_wire.py SCHEMA_DIR STORE_DIR SUBSCRIPTIONS server | stdio SCOPE` (the
receiver) and `compaction_wire.py host` (the host, its plan on stdin), run from the
SDK root with `PYTHONPATH=src`, as upstream's driver runs an SDK's.
"""

from __future__ import annotations

import sys

from upstream_emulator.compaction_wire import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
