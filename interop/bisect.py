"""`bisect`: the first commit of an adapter where one row fails.

    ahp-interop bisect --adapter-dir [NAME=]PATH --good REV --bad REV --row ROW-PATH

ROW-PATH is the row's path as every report writes it
(`suite/set/client->server/transport/auth/id`), with NAME (the adapter's name
without a revision) in the role it plays. The commits are those on the first-parent
line from BAD back to (not including) GOOD, oldest first; history is taken as that
line, as `git bisect --first-parent` does. Each commit tried is exported and built
(interop/revisions.py, cached) and the row run alone against its peer in a child
`matrix` (its report in a folder of its own):

- the row passed: good; failed: bad;
- the build failed, the run could not judge the row (a harness or usage error, the
  row not run, unsupported, inapplicable), or it was flaky: **skip**, as
  `git bisect skip` (exit 125 of a `git bisect run` script), never bad.

The answer is the first bad commit, or, when skipped commits border it, every
commit it could be (as git says "only 'skip'ped commits left to test"). Exit 0 with
an answer, 1 when BAD does not fail the row or GOOD does, 2 on a usage error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.contract.manifest import AdapterDir, ManifestError, load_manifest, manifest_in
from interop.results import rows_of
from interop.revisions import RevisionError, adapter_dir, git, resolve

GOOD, BAD, SKIP = "good", "bad", "skip"


class BisectError(ValueError):
    """The bisection cannot start: a row path or revision it cannot use."""


@dataclass(frozen=True)
class RowPath:
    suite: str
    set: str
    client: str
    server: str
    transport: str
    auth: str
    id: str

    @classmethod
    def parse(cls, text: str) -> RowPath:
        parts = text.split("/")
        pair = next((i for i, p in enumerate(parts) if "->" in p), None)
        if pair is None or pair < 2 or len(parts) != pair + 4:
            raise BisectError(
                f"--row {text}: a row path is suite/set/client->server/transport/auth/id "
                "(as JUnit names, known-failures.json and diff write it)"
            )
        client, _, server = parts[pair].partition("->")
        transport, auth, ident = parts[pair + 1 : pair + 4]
        return cls(parts[0], "/".join(parts[1:pair]), client, server, transport, auth, ident)


def commits(folder: Path, good: str, bad: str) -> list[str]:
    """The first-parent line from `bad` back to `good` (excluded), oldest first."""
    try:
        good_commit, bad_commit = resolve(folder, good), resolve(folder, bad)
        span = f"{good_commit}..{bad_commit}"
        line = git(folder, "rev-list", "--first-parent", "--reverse", span).split()
    except RevisionError as exc:
        raise BisectError(str(exc)) from None
    if not line or line[-1] != bad_commit:
        raise BisectError(f"--bad {bad} is not a descendant of --good {good}")
    return line


class Trial:
    """Try one commit: export, build, run the row alone, read its status."""

    def __init__(self, given: AdapterDir, row: RowPath, name: str, argv: list[str]) -> None:
        self.given, self.row, self.name, self.argv = given, row, name, argv
        self.log: list[tuple[str, str, str]] = []  # (commit, verdict, why)

    def __call__(self, commit: str) -> str:
        verdict, why = self._try(commit)
        self.log.append((commit, verdict, why))
        print(f"bisect: {commit[:12]} {verdict} ({why})", file=sys.stderr, flush=True)
        return verdict

    def _try(self, commit: str) -> tuple[str, str]:
        try:
            built = adapter_dir(AdapterDir(self.given.path, self.name), commit)
        except RevisionError as exc:
            return SKIP, str(exc)
        assert built.name is not None
        row = self.row
        client = built.name if row.client == self.name else row.client
        server = built.name if row.server == self.name else row.server
        with tempfile.TemporaryDirectory(prefix="ahp-bisect-") as work:
            output = Path(work) / "report.json"
            command = [
                sys.executable, "-m", "interop", "matrix", "--suite", row.suite,
                "--scenario", row.id, "--clients", client, "--servers", server,
                "--transports", row.transport, "--auth", row.auth, "--quiet",
                "--output", str(output), "--recheck", "1", built.argument(), *self.argv,
            ]  # fmt: skip
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if not output.exists():
                return SKIP, f"the run wrote no report (exit {done.returncode}): " + (
                    done.stderr.strip().splitlines() or ["no output"]
                )[-1][:200]
            status = _status(json.loads(output.read_text()), row)
        if status == "passed":
            return GOOD, "the row passed"
        if status in ("failed", "known-failing"):
            return BAD, "the row failed"
        return SKIP, f"the row was {status or 'not in the report'}"


def _status(report: dict[str, Any], row: RowPath) -> str | None:
    """The row's status in a report (passed rows are digests in the compact form)."""
    for combination in report.get("combinations", []):
        for found in rows_of(report, combination):
            if found.get("id") == row.id and row.set in str(found.get("set")).split("+"):
                return str(found.get("status"))
    return None


def search(line: list[str], test: Callable[[str], str]) -> tuple[list[str], dict[str, str]]:
    """The first bad commit of `line` (its last commit is bad, the one before its first
    good), as `git bisect` finds it with skips: the candidates it could be (one when
    the answer is certain) and each verdict taken."""
    verdicts: dict[str, str] = {}
    low, high = -1, len(line) - 1  # line[low] is good (or before the line), line[high] bad
    while high - low > 1:
        open_ = [i for i in range(low + 1, high) if verdicts.get(line[i]) != SKIP]
        if not open_:
            break
        middle = (low + high) // 2
        pick = min(open_, key=lambda i: (abs(i - middle), i))  # nearest the middle
        verdict = test(line[pick])
        verdicts[line[pick]] = verdict
        if verdict == GOOD:
            low = pick
        elif verdict == BAD:
            high = pick
    return line[low + 1 : high + 1], verdicts


def bisect(given: AdapterDir, good: str, bad: str, row_text: str, argv: list[str]) -> int:
    row = RowPath.parse(row_text)
    folder = given.path.resolve()
    try:
        name = given.name or load_manifest(manifest_in(folder)).language
    except ManifestError as exc:
        raise BisectError(str(exc)) from None
    if name not in (row.client, row.server):
        raise BisectError(
            f"--row {row_text} names {row.client} and {row.server}; the adapter bisected is "
            f"{name} (name it with --adapter-dir NAME=PATH)"
        )
    line = commits(folder, good, bad)
    trial = Trial(AdapterDir(folder, name), row, name, argv)
    if trial(line[-1]) != BAD:
        print(f"bisect: --bad {bad} does not fail the row: nothing to find", file=sys.stderr)
        return 1
    before = git(folder, "rev-parse", f"{line[0]}^")  # the line's own good end
    if trial(before) == BAD:
        print(f"bisect: --good {good} fails the row too", file=sys.stderr)
        return 1
    candidates, _ = search(line, trial)
    if len(candidates) == 1:
        subject = _subject(folder, candidates[0])
        print(f"{candidates[0]} is the first bad commit: {subject}")
    else:
        print("only skipped commits are left to test; the first bad commit could be any of:")
        for commit in candidates:
            print(f"{commit} {_subject(folder, commit)}")
    return 0


def _subject(folder: Path, commit: str) -> str:
    return git(folder, "log", "-1", "--format=%s", commit)
