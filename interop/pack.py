"""Built adapters as one archive: build once, run the matrix in several jobs (the nightly).

`python -m interop build --pack FILE` archives what each adapter's build made
(the git-ignored files under its folder: virtual environments, compiled
output, installed packages, stamps); `--unpack FILE` restores them into a
checkout of the same revision, after which a build is a no-op. Paths in the
archive are relative to the repository; unpacking refuses members that would
land outside it.
"""

from __future__ import annotations

import subprocess
import tarfile
from pathlib import Path

from interop import ROOT
from interop.contract.manifest import Adapter


def built_paths(adapter: Adapter) -> list[Path]:
    """The git-ignored entries (files or whole folders) under the adapter's folder."""
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "."],
        cwd=adapter.directory,
        capture_output=True,
        text=True,
        check=True,
    )
    return [adapter.directory / line.rstrip("/") for line in listed.stdout.splitlines() if line]


def pack(adapters: list[Adapter], archive: Path) -> int:
    archive.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with tarfile.open(archive, "w") as tar:
        for adapter in adapters:
            for path in built_paths(adapter):
                tar.add(path, arcname=str(path.resolve().relative_to(ROOT)))
                count += 1
    return count


def unpack(archive: Path) -> int:
    """Restore an archive `pack` made; the `tar` filter refuses a member whose path
    would land outside the repository (a virtual environment's links to its
    interpreter stay as they are)."""
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        for member in members:
            if not (ROOT / member.name).resolve().is_relative_to(ROOT):
                raise ValueError(f"{archive}: member {member.name!r} would land outside {ROOT}")
        tar.extractall(ROOT, filter="tar")
    return len(members)
