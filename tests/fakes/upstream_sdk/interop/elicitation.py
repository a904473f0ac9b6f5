"""The emulator's elicitation adapter, where contract v1 looks for it by convention.

`elicitation.py server SCHEMA_DIR authenticated:SENDER` (the receiver) or
`elicitation.py client` (the sender, a plan on stdin), run from the SDK root
with `PYTHONPATH=src`, as upstream's driver runs an SDK's.
"""

from __future__ import annotations

import sys

from upstream_emulator.elicitation import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
