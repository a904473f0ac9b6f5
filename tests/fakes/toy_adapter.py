"""The fake adapter of the toy suite (tests/fakes/suites/toy): standard library only.

Usage: toy_adapter.py [--wrong ROW_ID] --config PATH. It reads the config's scenario file
and writes `{row id: a + b}` to its report file; `--wrong ROW_ID` answers that row one
too many, so the test sees the suite's rule fail.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wrong", default=None)
    parser.add_argument("--config", type=Path, required=True)
    args = parser.parse_args()
    config = json.loads(args.config.read_text(encoding="utf-8"))
    rows = json.loads(Path(config["scenarioFile"]).read_text(encoding="utf-8"))["scenarios"]
    answers = {row["id"]: row["a"] + row["b"] + (row["id"] == args.wrong) for row in rows}
    Path(config["reportFile"]).write_text(json.dumps(answers), encoding="utf-8")


if __name__ == "__main__":
    main()
