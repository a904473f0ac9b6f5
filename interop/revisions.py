"""Any git revision of an adapter: `--adapter-dir [NAME=]PATH@REV`.

PATH is a folder in a git repository (an SDK's checkout, or its `interop/`
folder's parent). REV is any revision git names (`v1.2.0`, `main~3`, a hash).
The revision's whole tree is exported (`git archive`: the checkout itself, its
index, branches and worktrees are never touched) into the cache, once per
commit, and its adapter's own `build` command is run there, once; the adapter
then runs under the name `NAME@REV` (NAME: the given one, else the manifest's
`language`; REV as given when it is a plain word, else the short commit).
Several revisions of one SDK run in one grid side by side.

The cache (`$AHP_INTEROP_CACHE`, default `~/.cache/ahp-interop`) keeps one folder
per repository and commit, each marked as ours; `ahp-interop clean` removes those
folders and nothing else. A run never removes any of it. A build that failed is
remembered with its log and exit status, and reported, never retried silently
(`clean` forgets it).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from interop.contract.manifest import AdapterDir, ManifestError, load_manifest, manifest_in

MARKER = ".ahp-interop-revision"  # in every cache folder this module made
BUILT = ".ahp-built"
FAILED = ".ahp-build-failed"
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
BUILD_TIMEOUT = 1800.0


class RevisionError(ValueError):
    """A revision that cannot be had: not a git folder, an unknown revision, a failed build."""


def cache_root() -> Path:
    given = os.environ.get("AHP_INTEROP_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "ahp-interop"


@dataclass(frozen=True)
class Revision:
    """One revision of one adapter folder, exported and built."""

    commit: str
    label: str  # what the adapter's name carries after `@`
    directory: Path  # the adapter folder inside the exported tree


def git(folder: Path, *args: str) -> str:
    """`git -C folder ARGS`'s output; a failure is a RevisionError naming the command."""
    done = subprocess.run(
        ["git", "-C", str(folder), *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RevisionError(f"{folder}: git {' '.join(args)}: {done.stderr.strip()[:300]}")
    return done.stdout.strip()


def resolve(folder: Path, rev: str) -> str:
    """The full commit hash `rev` names in the repository holding `folder`."""
    if not folder.is_dir():
        raise RevisionError(f"--adapter-dir {folder}@{rev}: {folder} is not a folder")
    return git(folder, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder per commit at a time (two runs may want the same one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def materialize(folder: Path, rev: str, *, build: bool = True) -> Revision:
    """`folder` at `rev`, exported into the cache and built (both once per commit)."""
    folder = folder.resolve()
    try:
        commit = resolve(folder, rev)
    except RevisionError as exc:
        raise RevisionError(f"--adapter-dir {folder}@{rev}: no such revision ({exc})") from None
    top = Path(git(folder, "rev-parse", "--show-toplevel")).resolve()
    inside = folder.relative_to(top)
    repo = hashlib.sha256(str(top).encode()).hexdigest()[:12]
    home = cache_root() / "revisions" / f"{top.name}-{repo}" / commit
    tree = home / "tree"
    with _locked(home.parent / f"{commit}.lock"):
        if not (home / MARKER).exists():
            if home.exists():  # an export cut short: ours (its lock is held), redone
                shutil.rmtree(home)
            tree.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "-C", str(top), "archive", "--format=tar", commit],
                capture_output=True,
                check=True,
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(tree, filter="tar")
            (home / MARKER).write_text(f"{top}\n{commit}\n")
        directory = tree / inside
        plain = WORD.fullmatch(rev) and len(rev) <= 40 and not commit.startswith(rev)
        label = rev if plain else commit[:12]  # a hash given is shown short
        if build:
            _build(directory, home, f"{folder}@{rev} ({commit[:12]})")
    return Revision(commit, label, directory)


def _build(directory: Path, home: Path, shown: str) -> None:
    if (home / BUILT).exists():
        return
    failed = home / FAILED
    if failed.exists():
        raise RevisionError(f"{shown}: its build failed before: {failed.read_text().strip()}")
    try:
        adapter = load_manifest(manifest_in(directory))
    except ManifestError as exc:
        raise RevisionError(f"{shown}: {exc}") from None
    command = adapter.command("build")
    if command is not None:
        log = home / "build.log"
        log.write_bytes(b"")
        code = run_logged(list(command), adapter.directory, log, BUILD_TIMEOUT)
        if code != 0:
            failed.write_text(f"exit {code}; log: {log}\n")
            raise RevisionError(f"{shown}: its build failed (exit {code}); log: {log}")
    (home / BUILT).write_text("")


def run_logged(command: list[str], cwd: Path, log: Path, timeout: float) -> int | str:
    """Run a build step with its output appended to `log` (after a `$ command` line):
    its exit status, or why it could not run or finish."""
    with log.open("ab") as out:
        out.write(f"$ {' '.join(command)}\n".encode())
        out.flush()
        try:
            done = subprocess.run(
                command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{type(exc).__name__}: {exc}"
    return done.returncode


def adapter_dir(given: AdapterDir, rev: str) -> AdapterDir:
    """The `--adapter-dir` of a revision: its exported, built folder, named `NAME@REV`."""
    revision = materialize(given.path, rev)
    name = given.name
    if name is None:
        try:
            name = load_manifest(manifest_in(revision.directory)).language
        except ManifestError as exc:
            raise RevisionError(f"--adapter-dir {given.path}@{rev}: {exc}") from None
    return AdapterDir(revision.directory, f"{name}@{revision.label}")


def clean() -> list[Path]:
    """Remove every cache folder this module made (marked); nothing else. Returns them."""
    removed: list[Path] = []
    root = cache_root() / "revisions"
    if not root.is_dir():
        return removed
    for repo in sorted(root.iterdir()):
        if not repo.is_dir():
            continue
        for home in sorted(repo.iterdir()):
            if home.is_dir() and (home / MARKER).is_file():
                shutil.rmtree(home)
                removed.append(home)
            elif home.suffix == ".lock" and home.is_file():
                home.unlink()
        with contextlib.suppress(OSError):
            repo.rmdir()  # only when nothing else is left in it
    return removed
