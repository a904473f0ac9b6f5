"""The AHP Interop Matrix harness: orchestrates adapters and verifies what they report.

The harness applies no protocol effects. Clients apply effects and report what
they derived; the harness starts processes, hands out configuration, collects
reports and receipts, and compares them with the scenario files.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
__version__ = "0.2.0"
