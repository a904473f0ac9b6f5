"""The GitHub Action (action.yml) and the nightly's real-SDK job, run as plain commands.

Both keep their logic in scripts (`action/steps.sh`, `tools/nightly-sdks.sh`) that
the workflow steps call one by one; here each step the Action declares runs in a
plain shell, in order, with the variables GitHub would set, against a throwaway
git checkout holding a fake SDK adapter. The nightly's steps run the same way with
a pins file whose SDKs are local git repositories (one whose build fails: it is
reported and still run, never dropped). actionlint checks the Action's inputs
through `.github/workflows/action.yml` (`nox -s lint`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from interop import ROOT

ACTION = (ROOT / "action.yml").read_text(encoding="utf-8")


def _git_repo(folder: Path, files: dict[str, str]) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.test",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.test"}  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "sdk"]):
        subprocess.run(["git", "-C", str(folder), *args], env=env, check=True, capture_output=True)
    return subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip


def _shell(installed: Path, **extra: str) -> dict[str, str]:
    """A runner's shell: the toolchains and their caches (HOME) as the machine has them."""
    path = f"{installed / 'bin'}:{os.environ['PATH']}"
    return {"PATH": path, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", **extra}


def test_the_actions_steps_run_as_plain_commands(
    installed: Path, tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    steps = re.findall(r'run: bash "\$GITHUB_ACTION_PATH/action/steps\.sh" (\w+)', ACTION)
    assert steps == ["install", "build", "matrix", "summary", "verdict"]
    block = ACTION[ACTION.index("\ninputs:\n") : ACTION.index("\noutputs:\n")]
    inputs = re.findall(r"^  ([a-z-]+):\n    description:", block, flags=re.M)
    mapped = set(re.findall(r"INPUT_([A-Z_]+): \$\{\{ inputs\.([a-z-]+) \}\}", ACTION))
    assert {i for _, i in mapped} == set(inputs) - {"artifact-name"}  # that one: upload's
    assert all(env == i.upper().replace("-", "_") for env, i in mapped)

    workspace = tmp_path / "sdk-checkout"
    manifest = json.loads((fake_adapter("mine", client="lie") / "adapter.json").read_text())
    _git_repo(workspace, {"adapter/adapter.json": json.dumps(manifest)})
    files = {k: tmp_path / k for k in ("summary.md", "path.txt", "output.txt")}
    for f in files.values():
        f.write_text("")
    env = _shell(
        installed,
        GITHUB_ACTION_PATH=str(ROOT), GITHUB_WORKSPACE=str(workspace),
        RUNNER_TEMP=str(tmp_path / "runner"), GITHUB_STEP_SUMMARY=str(files["summary.md"]),
        GITHUB_PATH=str(files["path.txt"]), GITHUB_OUTPUT=str(files["output.txt"]),
        INPUT_ADAPTER_DIR="adapter", INPUT_NAME="mine", INPUT_SUITES="core",
        INPUT_ARGS=f"--scenarios {small_set} --clients mine python --servers python "
        "--transports http --auth none --quiet",
    )  # fmt: skip
    (tmp_path / "runner").mkdir()

    def step(name: str, **more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(ROOT / "action" / "steps.sh"), name], env={**env, **more},
            cwd=workspace, capture_output=True, text=True, timeout=900,
        )  # fmt: skip

    for name in steps[:-1]:
        done = step(name)
        assert done.returncode == 0, (name, done.stdout[-2000:], done.stderr[-2000:])
    report = Path(files["output.txt"].read_text().strip().removeprefix("report="))
    document: dict[str, Any] = json.loads(report.read_text())
    assert {c["client"]: c["status"] for c in document["combinations"]} == {
        "mine": "failed", "python": "passed",
    }  # fmt: skip
    assert files["summary.md"].read_text().startswith("## AHP Interop Matrix: failed")
    assert (report.parent / "report.html").exists() and (report.parent / "report.xml").exists()
    assert str(tmp_path / "runner" / "ahp-interop" / "env" / "bin") in files["path.txt"].read_text()
    assert step("verdict").returncode == 1  # no baseline: a failure fails the job
    baseline = tmp_path / "baseline.json"
    shutil.copy(report, baseline)  # the same result again: no regression
    assert step("verdict", INPUT_BASELINE=str(baseline)).returncode == 0


def test_the_nightlys_sdk_steps_run_as_plain_commands(
    installed: Path, tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    honest = json.loads((fake_adapter("sdk") / "adapter.json").read_text())
    honest.pop("build", None)
    honest.pop("extensions", None)  # as an upstream SDK's: contract v1, compat
    good = _git_repo(tmp_path / "repos" / "good-sdk", {"interop/adapter.json": json.dumps(honest)})
    bad = _git_repo(tmp_path / "repos" / "bad-sdk", {"interop/adapter.json": json.dumps(honest)})
    pins = {
        "version": 1,
        "sdks": {
            "good-sdk": {"repository": str(tmp_path / "repos" / "good-sdk"), "revision": good,
                         "interop": "interop", "build": [["true"]]},
            "bad-sdk": {"repository": str(tmp_path / "repos" / "bad-sdk"), "revision": bad,
                        "interop": "interop", "build": [["false"]]},
        },
    }  # fmt: skip
    (tmp_path / "pins.json").write_text(json.dumps(pins))
    env = _shell(
        installed, PINS=str(tmp_path / "pins.json"),
        SDKS_DIR=str(tmp_path / "sdks"), OUTPUT=str(tmp_path / "out" / "report.json"),
        MATRIX_ARGS=f"--suite core --scenarios {small_set} --clients good-sdk bad-sdk python "
        "--servers python --transports http --auth none --quiet",
    )  # fmt: skip
    script = ROOT / "tools" / "nightly-sdks.sh"
    prepared = subprocess.run(["bash", str(script), "prepare"], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=600)  # fmt: skip
    assert prepared.returncode == 1  # a pin did not build: reported
    assert "bad-sdk: `false` failed" in prepared.stderr
    status = json.loads((tmp_path / "sdks" / "status.json").read_text())
    assert {n: e["status"] for n, e in status.items()} == {
        "good-sdk": "built", "bad-sdk": "build-failed",
    }  # fmt: skip
    ran = subprocess.run(["bash", str(script), "run"], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    clients = {c["client"] for c in report["combinations"]}
    assert clients == {"good-sdk", "bad-sdk", "python"}  # never dropped
