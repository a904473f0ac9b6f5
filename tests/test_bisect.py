"""Any git revision of an adapter, and `bisect` (interop/revisions.py, interop/bisect.py).

A throwaway git repository holds eight commits of a fake adapter (its client
honest, then lying about the first row from one commit on; one commit's build
fails). `bisect` must name the same first bad commit as `git bisect run` with a
script that exits 125 for a commit that does not build, and `PATH@REV` runs two
revisions of it side by side in one grid.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT, revisions
from interop.bisect import GOOD, SKIP, search
from interop.cli import main
from tests.conftest import FAKE

BREAKS, UNBUILDABLE = 6, 4  # c6 starts lying; c4 does not build


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test"}  # fmt: skip
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.strip()


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    monkeypatch.setenv("AHP_INTEROP_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "sdk-repo"
    (repo / "adapter").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    commits: list[str] = []
    for number in range(1, 9):
        behaviour = "lie" if number >= BREAKS else "honest"
        build = ["false"] if number == UNBUILDABLE else ["true"]
        manifest = {
            "language": "fake",
            "client": [sys.executable, str(FAKE), "client", "--behaviour", behaviour],
            "server": [sys.executable, str(FAKE), "server"],
            "build": build,
            "extensions": {"receiptLog": True, "profiles": ["strict"]},
        }
        (repo / "adapter" / "adapter.json").write_text(json.dumps(manifest))
        (repo / "adapter" / "NOTES").write_text(f"commit {number}\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"c{number}")
        _git(repo, "tag", f"v{number}")
        commits.append(_git(repo, "rev-parse", "HEAD"))
    return repo, commits


def _row(small_set: Path) -> str:
    first = json.loads(small_set.read_text())["scenarios"][0]["id"]
    return f"core/small/mine->peer/http/none/{first}"


def _peer_options(tmp_path: Path, peer: Path) -> list[str]:
    return ["--adapters-root", str(tmp_path / "none"), "--adapter-dir", f"peer={peer}"]


def test_bisect_names_the_commit_git_bisect_run_names(
    history: tuple[Path, list[str]], tmp_path: Path, fake_adapter: Callable[..., Path],
    small_set: Path, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    repo, commits = history
    peer = fake_adapter("peer")
    options = [*_peer_options(tmp_path, peer), "--scenarios", str(small_set)]
    code = main(
        ["bisect", "--adapter-dir", f"mine={repo / 'adapter'}", "--good", "v1", "--bad", "v8",
         "--row", _row(small_set), "--", *options]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    ours = captured.out.split()[0]
    assert f"{commits[UNBUILDABLE - 1][:12]} skip" in captured.err  # tried, and skipped

    # git's own bisect, its script skipping (125) a commit that does not build
    script = tmp_path / "judge.py"
    script.write_text(
        "import json, subprocess, sys\n"
        f"adapter = {str(repo / 'adapter')!r}\n"
        "build = json.load(open(adapter + '/adapter.json'))['build']\n"
        "if subprocess.run(build, cwd=adapter).returncode != 0:\n"
        "    sys.exit(125)\n"
        f"argv = [sys.executable, '-m', 'interop', 'matrix', '--suite', 'core', '--quiet',\n"
        f"        '--scenario', {_row(small_set).rsplit('/', 1)[1]!r}, '--clients', 'mine',\n"
        "        '--servers', 'peer', '--transports', 'http', '--auth', 'none',\n"
        f"        '--output', {str(tmp_path / 'git-bisect' / 'report.json')!r},\n"
        f"        '--adapter-dir', 'mine=' + adapter, *{options!r}]\n"
        f"sys.exit(1 if subprocess.run(argv, cwd={str(ROOT)!r}).returncode else 0)\n"
    )
    _git(repo, "bisect", "start", "v8", "v1")
    found = _git(repo, "bisect", "run", sys.executable, str(script))
    _git(repo, "bisect", "reset")
    line = next(li for li in found.splitlines() if "is the first bad commit" in li)
    assert line.split()[0] == ours == commits[BREAKS - 1]


def test_two_revisions_of_one_adapter_run_in_one_grid(
    history: tuple[Path, list[str]], tmp_path: Path, fake_adapter: Callable[..., Path],
    small_set: Path,
) -> None:  # fmt: skip
    repo, _ = history
    peer = fake_adapter("peer")
    output = tmp_path / "out" / "report.json"
    argv = ["matrix", "--suite", "core", "--scenarios", str(small_set), "--quiet"]
    argv += ["--output", str(output), "--transports", "http", "--auth", "none"]
    argv += ["--adapter-dir", f"mine={repo / 'adapter'}@v1"]
    argv += ["--adapter-dir", f"mine={repo / 'adapter'}@v8", "--servers", "peer"]
    argv += _peer_options(tmp_path, peer)
    assert main(argv) == 1
    report: dict[str, Any] = json.loads(output.read_text())
    status = {c["client"]: c["status"] for c in report["combinations"]}
    assert status == {"mine@v1": "passed", "mine@v8": "failed", "peer": "passed"}
    assert _git(repo, "status", "--porcelain") == ""  # the checkout is untouched
    assert len(revisions.clean()) == 2  # the cache's two exports, and nothing else
    assert (repo / "adapter" / "adapter.json").exists()


def test_search_skips_like_git_bisect() -> None:
    line = [f"c{i}" for i in range(2, 9)]  # c1 good before it, c8 bad

    def verdict(commit: str) -> str:
        number = int(commit[1:])
        return SKIP if number == UNBUILDABLE else GOOD if number < BREAKS else "bad"

    assert search(line, verdict)[0] == [f"c{BREAKS}"]
    # skipped commits bordering the answer leave every candidate
    assert search(line, lambda c: SKIP if c != "c8" else "bad")[0] == line
