from __future__ import annotations

import sys

from interop.cli import main

sys.exit(main())
