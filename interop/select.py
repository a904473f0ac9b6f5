"""Row selection: `--scenario GLOB` and `--tag TAG`, for re-running one row or a few.

A row is selected when its id matches one of the globs (all rows when none is
given; `fnmatch` rules, case-sensitive) and, when tags are given, it carries
one of them (only scenario files carry `tags`; rows a suite makes itself,
such as receiver probes and auth cases, carry none). Selection works in two
places, both generic: the scenario files of suites whose rows are the files'
rows are rewritten with only the selected rows (so nothing else runs), and
every outcome and set description keeps only the selected rows (so rows a
suite makes itself are filtered too). The report records the selection.
"""

from __future__ import annotations

import fnmatch
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, dumps_canonical, load_file
from interop.results import Outcome
from interop.suites.base import set_file


@dataclass(frozen=True)
class Selection:
    scenarios: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.scenarios or self.tags)

    def keeps(self, row_id: str, tags: Any = ()) -> bool:
        if self.scenarios and not any(fnmatch.fnmatchcase(row_id, g) for g in self.scenarios):
            return False
        if self.tags:
            carried = set(tags) if isinstance(tags, list) else set()
            return bool(carried & set(self.tags))
        return True

    def as_json(self) -> dict[str, list[str]]:
        return {"scenario": list(self.scenarios), "tag": list(self.tags)}


def _rows(document: Any) -> list[Any] | None:
    rows = document.get("scenarios") if isinstance(document, dict) else None
    return rows if isinstance(rows, list) else None


def row_tags(paths: list[Path]) -> dict[str, list[str]]:
    """Each file row's tags by id (rows without tags map to [])."""
    found: dict[str, list[str]] = {}
    for path in paths:
        try:
            rows = _rows(load_file(path)) or []
        except (OSError, JsonError):
            continue  # the suite's own loader names the problem
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                tags = row.get("tags")
                found[row["id"]] = (
                    [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
                )
    return found


class SelectedFiles:
    """Copies of scenario files holding only the selected rows, in a folder this
    run made (deleted by `close`). A copy keeps its file name and its folder's
    name, which some suites derive a set's name from."""

    def __init__(self) -> None:
        self._folder: Path | None = None  # made at the first copy
        self.originals: dict[Path, Path] = {}  # copy -> original

    @property
    def folder(self) -> Path:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="ahp-interop-selected-"))
        return self._folder

    def select(self, paths: list[Path], selection: Selection) -> list[Path]:
        """The paths to load: each file with selected rows as a trimmed copy; files
        with none left out."""
        out: list[Path] = []
        for path in paths:
            try:
                document = load_file(path)
            except (OSError, JsonError):
                out.append(path)  # the suite's loader reports it
                continue
            rows = _rows(document)
            if rows is None:
                out.append(path)
                continue
            kept = [
                r
                for r in rows
                if isinstance(r, dict)
                and isinstance(r.get("id"), str)
                and selection.keeps(r["id"], r.get("tags"))
            ]
            if not kept:
                continue
            copy = self.folder / str(len(self.originals)) / path.parent.name / path.name
            copy.parent.mkdir(parents=True)
            copy.write_text(dumps_canonical({**document, "scenarios": kept}), encoding="utf-8")
            self.originals[copy.resolve()] = path.resolve()
            out.append(copy.resolve())
        return out

    def close(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def restore_origin(described: dict[str, Any], files: SelectedFiles | None) -> dict[str, Any]:
    """A set description of a trimmed copy, naming the original file and its sha256
    (a copy lies outside the repository, so its description names it by its own path)."""
    if files is None:
        return described
    for copy, original in files.originals.items():
        if described.get("file") in (copy.name, str(copy)):
            file = set_file(original)
            digest = hashlib.sha256(original.read_bytes()).hexdigest()
            return {**described, "file": file, "sha256": digest}
    return described


def trim_description(
    described: dict[str, Any], selection: Selection, tags: dict[str, list[str]]
) -> dict[str, Any]:
    rows = [(i, e) for i, e in described["rows"] if selection.keeps(i, tags.get(i, []))]
    return {**described, "rows": rows, "scenarios": len(rows)}


def trim_outcome(outcome: Outcome, selection: Selection, tags: dict[str, list[str]]) -> None:
    outcome.rows = [r for r in outcome.rows if selection.keeps(r.id, tags.get(r.id, []))]
