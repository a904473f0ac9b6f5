"""Repro bundles: one folder per failed row, enough to reproduce it from a fresh shell.

After a run, every `failed` row (known failures and flaky rows are not failures to
chase) gets `<report>-logs/bundles/<suite>-<row>-<hash of its path>/` (at most LIMIT
per run, the first in report order; the run says how many were left out) holding:

- `row.json`: the row as the report has it (expected, actual, error, diagnostics),
  its combination, its scenario-file row (for the suites whose rows are a file's),
  and what coverage charged it to (docs/blame.md);
- `capture.json` / `capture.jsonl`: the recheck's frames, when it had some;
- `logs/`: the combination's adapter logs (redacted, as in the report's logs);
- `rerun.sh`: one command that runs exactly this row for exactly this pair again,
  from any shell (`sh rerun.sh`): it changes to the repository, uses the harness's
  own interpreter, names both adapters by their folders (nothing else is
  discovered), the trust profile and the spec of the run, and writes into the
  bundle's own `rerun/` folder: the full run's report is never touched.

`python -m interop repro BUNDLE [--client NAME]` (interop/report/repro.py) replays
a core bundle's server side to another client. The row's `diagnostics.bundle`
names its folder, relative to the report.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.contract.manifest import Adapter
from interop.coverage import charges_of
from interop.globs import exact
from interop.redact import Redactor
from interop.suites import DECLARATIONS

LIMIT = 200  # bundles per run


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:60] or "row"


def _name(combination: dict[str, Any], set_name: str, row_id: str) -> str:
    """A bundle's folder name: the row's path, so a run and its shards name it alike."""
    path = "/".join(
        [str(combination["suite"]), set_name]
        + [str(combination[k]) for k in ("client", "server", "transport", "auth")]
        + [row_id]
    )
    digest = hashlib.sha256(path.encode()).hexdigest()[:8]
    return f"{combination['suite']}-{_slug(row_id)[:40]}-{digest}"


def assign(
    document: dict[str, Any], logs: Path
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], int]:
    """Name a bundle folder on each failed row (`diagnostics.bundle`, relative to the
    report's folder); the (combination, row) pairs that got one, in report order, and
    how many failed rows got none (past LIMIT)."""
    chosen: list[tuple[dict[str, Any], dict[str, Any]]] = []
    left = 0
    for combination in document.get("combinations", []):
        for set_name, result in sorted(combination.get("results", {}).items()):
            for row in result.get("rows", []):
                if row.get("status") != "failed":
                    continue
                if len(chosen) >= LIMIT:
                    left += 1
                    continue
                name = _name(combination, set_name, str(row["id"]))
                row.setdefault("diagnostics", {})["bundle"] = f"{logs.name}/bundles/{name}"
                chosen.append((combination, {**row, "set": set_name}))
    return chosen, left


def rerun_argv(
    document: dict[str, Any],
    combination: dict[str, Any],
    row: dict[str, Any],
    adapters: dict[str, Adapter],
    spec: Path | None,
    output: Path,
) -> list[str]:
    """The command that runs exactly `row` of `combination` again into `output`."""
    suite = str(combination["suite"])
    argv = [sys.executable, "-m", "interop", "matrix", "--suite", suite]
    for described in document.get("sets", []):
        if described["suite"] == suite and described["name"] == row["set"]:
            file = str(described.get("file", ""))
            if suite in DECLARATIONS and DECLARATIONS[suite].file_rows and file.endswith(".json"):
                argv += ["--scenarios", str((ROOT / file).resolve())]
    argv += ["--scenario", exact(str(row["id"]))]
    argv += ["--clients", str(combination["client"]), "--servers", str(combination["server"])]
    argv += ["--transports", str(combination["transport"]), "--auth", str(combination["auth"])]
    argv += ["--profile", str(document.get("profile") or "strict")]
    for name in dict.fromkeys((str(combination["client"]), str(combination["server"]))):
        adapter = adapters.get(name)
        if adapter is not None:
            argv += ["--adapter-dir", f"{name}={adapter.directory}"]
    argv += ["--adapters-root", str(output.parent / "no-other-adapters")]
    if spec is not None:
        argv += ["--spec", str(spec)]
    return [*argv, "--output", str(output / "report.json")]


def write(
    document: dict[str, Any],
    chosen: list[tuple[dict[str, Any], dict[str, Any]]],
    logs: Path,
    adapters: dict[str, Adapter],
    spec: Path | None,
    redactor: Redactor,
) -> None:
    """Each chosen row's bundle folder (see the module's text)."""
    for combination, row in chosen:
        folder = logs.parent / str(row["diagnostics"]["bundle"])
        folder.mkdir(parents=True, exist_ok=True)
        key = "--".join(str(combination[k]) for k in ("client", "server", "transport", "auth"))
        record = {
            "suite": combination["suite"],
            "combination": {k: combination[k] for k in ("client", "server", "transport", "auth")},
            "profile": document.get("profile"),
            "row": row,
            "scenario": _scenario_row(document, combination, row),
            "charges": charges_of(document, combination, row["set"], row["id"]),
            "adapters": {
                n: str(adapters[n].directory)
                for n in (str(combination["client"]), str(combination["server"]))
                if n in adapters
            },
        }
        (folder / "row.json").write_text(
            redactor.stable(json.dumps(record, indent=1, ensure_ascii=False)) + "\n",
            encoding="utf-8",
        )
        source = logs / key
        if source.is_dir():
            shutil.copytree(source, folder / "logs", dirs_exist_ok=True)
            capture = capture_of(source, str(row["set"]))
            if capture is not None:
                shutil.copy(capture, folder / ("capture" + capture.suffix))
        argv = rerun_argv(document, combination, row, adapters, spec, folder / "rerun")
        script = (
            "#!/bin/sh\n"
            f"# runs {combination['suite']}/{row['set']}/{row['id']} of "
            f"{combination['client']} -> {combination['server']} "
            f"[{combination['transport']}/{combination['auth']}] again, alone, into this\n"
            "# bundle's rerun/ folder; the full run's report is not touched\n"
            f"cd {shlex.quote(str(ROOT))} || exit 2\n"
            f"exec {shlex.join(argv)}\n"
        )
        (folder / "rerun.sh").write_text(script, encoding="utf-8")
        (folder / "rerun.sh").chmod(0o755)


def _scenario_row(
    document: dict[str, Any], combination: dict[str, Any], row: dict[str, Any]
) -> Any:
    """The row as its scenario file has it (None when the suite makes its rows)."""
    for described in document.get("sets", []):
        if described["suite"] != combination["suite"] or described["name"] != row["set"]:
            continue
        path = ROOT / str(described.get("file", ""))
        if not path.is_file() or path.suffix != ".json":
            return None
        try:
            rows = json.loads(path.read_text(encoding="utf-8")).get("scenarios", [])
        except (OSError, ValueError, AttributeError):
            return None
        return next((r for r in rows if isinstance(r, dict) and r.get("id") == row["id"]), None)
    return None


def command_of(row: dict[str, Any], report_folder: Path | None = None) -> str | None:
    """The printed command of a row's bundle (`sh <folder>/rerun.sh`), if it has one."""
    bundle = (row.get("diagnostics") or {}).get("bundle")
    if not isinstance(bundle, str):
        return None
    path = (report_folder / bundle) if report_folder is not None else Path(bundle)
    return f"sh {shlex.quote(str(path))}/rerun.sh"


def capture_of(folder: Path, set_name: str) -> Path | None:
    """A combination's recheck capture for a row of `set_name`: the one file named
    after its set, or after the merged run (`a+b`) that held it."""
    for found in sorted(folder.glob("capture-*.json*")):
        named = found.name.removeprefix("capture-").split(".")[0]
        if set_name in named.split("+"):
            return found
    return None
