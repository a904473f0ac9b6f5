"""The README's install (`./install.sh`) makes `ahp-interop` work from a plain shell.

The shell here is fresh: PATH holds the installed environment and the system's
own folders only, HOME is empty, and it runs in a folder outside this checkout
(an SDK's checkout, holding a fake adapter). In it:

- every `ahp-interop ...` command the README shows is parsed by the installed
  command (`--help` appended: the subcommand and each option before it must
  exist and take its value);
- the SDK author's loop runs for real: smoke, a matrix run, the HTML page,
  a diff, the error table, and a failed row's re-run script.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from interop import ROOT


def _shell(venv: Path, home: Path) -> dict[str, str]:
    return {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
    }


def _readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    commands: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith("ahp-interop "):
                commands.append(shlex.split(line))
    return commands


def test_every_readme_command_parses_in_a_fresh_shell(installed: Path, tmp_path: Path) -> None:
    commands = _readme_commands()
    assert len(commands) >= 8, commands
    env = _shell(installed, tmp_path)
    for argv in commands:
        cut = argv.index("--") if "--" in argv else len(argv)  # options for a child run
        done = subprocess.run(
            [*argv[:cut], "--help"], env=env, cwd=tmp_path, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.startswith(("usage: ahp-interop", "ahp-interop 0.")), (argv, done.stdout)


def test_the_sdk_authors_loop_runs_from_a_plain_shell(
    installed: Path, tmp_path: Path, fake_adapter: Callable[..., Path], small_set: Path
) -> None:
    sdk = tmp_path / "my-sdk"
    shutil.copytree(fake_adapter("mine", client="lie"), sdk)
    shutil.copytree(fake_adapter("peer"), tmp_path / "peer")
    env = _shell(installed, tmp_path / "home")
    (tmp_path / "home").mkdir()

    def run(*argv: str, code: int = 0) -> str:
        done = subprocess.run(
            ["ahp-interop", *argv], env=env, cwd=sdk, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == code, (argv, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout + done.stderr

    assert run("--version").startswith("ahp-interop ")
    assert "| `ManifestInvalid` |" in run("errors")
    run("smoke", "--adapter-dir", "peer=../peer", "--adapters-root", str(tmp_path / "none"))
    base = ["matrix", "--suite", "core", "--scenarios", str(small_set), "--transports", "http"]
    base += ["--auth", "none", "--adapters-root", str(tmp_path / "none"), "--quiet"]
    base += ["--adapter-dir", "peer=../peer"]
    run(*base, "--output", "out/good.json")
    printed = run(*base, "--adapter-dir", "mine=.", "--output", "out/bad.json", code=1)
    run("report", "html", "out/bad.json", "-o", "out/bad.html")
    assert (sdk / "out" / "bad.html").stat().st_size > 0
    run("diff", "out/good.json", "out/good.json")
    script = re.search(r"re-run one: sh (\S+)", printed)
    assert script is not None, printed
    again = subprocess.run(
        ["sh", script.group(1)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 1, again.stderr[-2000:]
    report = json.loads((sdk / "out" / "bad.json").read_text())
    assert any(c["status"] == "failed" for c in report["combinations"])
