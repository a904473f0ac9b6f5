"""A client with one planted semantic bug, for the fuzzer's own tests.

`buggy_client.py --bug BUG --language NAME --config PATH` runs the real Python
adapter's client on the same config, then misreads one rule in its report:

- `deep-merge`: a `merge` of the tool input is applied deeply (nested objects
  merged key by key) instead of shallowly (nested values replaced whole);
- `stop-ignored`: a `flow` `stop` does not hold the tool call (`executed`
  stays true when the decision is `allow`).

Rows the bug does not touch are reported exactly as the real client did, so
the fuzzer must find the bug from the rows it does touch.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON_ADAPTER = ROOT / "adapters" / "python"


def deep_merge(current: Any, value: Any) -> Any:
    if not isinstance(current, dict) or not isinstance(value, dict):
        return copy.deepcopy(value)
    merged = dict(current)
    for key, item in value.items():
        merged[key] = deep_merge(current.get(key), item) if key in current else item
    return merged


def misread_merge(scenario: dict[str, Any], actual: dict[str, Any]) -> None:
    if "input" not in actual:
        return
    current: Any = scenario["request"]["params"]["event"]["tool"]["input"]
    for effect in scenario["response"]["result"]["effects"]:
        if effect.get("type") == "modify" and effect.get("target") == "input":
            if effect["operation"] == "replace":
                current = copy.deepcopy(effect["value"])
            else:
                current = deep_merge(current, effect["value"])
    actual["input"] = current
    actual["effective"] = {"input": current}


def misread_stop(scenario: dict[str, Any], actual: dict[str, Any]) -> None:
    incoming = scenario["request"]["params"].get("state", {}).get("flow")
    stopped = actual.get("flow") == "stop" and incoming != "stop"
    if stopped and actual.get("decision") == "allow" and "result" not in actual:
        actual["executed"] = True


BUGS = {"deep-merge": misread_merge, "stop-ignored": misread_stop}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bug", choices=sorted(BUGS), required=True)
    parser.add_argument("--language", required=True)
    parser.add_argument("--config", type=Path, required=True)
    args = parser.parse_args()
    command = [str(PYTHON_ADAPTER / ".venv" / "bin" / "python"), "-m", "ahp_py", "client"]
    completed = subprocess.run([*command, "--config", str(args.config)], cwd=PYTHON_ADAPTER)
    config = json.loads(args.config.read_text())
    report_path = Path(config["reportFile"])
    report = json.loads(report_path.read_text())
    scenarios = {
        s["id"]: s for s in json.loads(Path(config["scenarioFile"]).read_text())["scenarios"]
    }
    for entry in report["results"]:
        actual = entry.get("actual")
        accepted = isinstance(actual, dict) and actual.get("rejected") is not True
        if entry.get("status") == "completed" and accepted and entry["id"] in scenarios:
            BUGS[args.bug](scenarios[entry["id"]], actual)
    report["language"] = args.language
    report_path.write_text(json.dumps(report))
    return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
