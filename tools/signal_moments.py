"""Send SIGINT, SIGTERM and SIGHUP to a matrix run at random moments; check nothing survives.

    python3 tools/signal_moments.py --moments 50 [--seed N] [-- MATRIX ARGS...]

For each signal and each moment (a delay drawn uniformly from zero to the
length of an undisturbed run, measured first), it starts `python -m interop
matrix` with a private TMPDIR, sends the signal after the delay, and checks:
the harness ends within `--grace` seconds; no process that inherited that
TMPDIR is left; the TMPDIR is empty (the run's temp and trust directories
are gone); and where a report was written after the signal, it is marked
incomplete (or the run had already finished). Prints one line per moment and
a summary; exits 1 if any moment broke a rule.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
SIGNALS = {"INT": signal.SIGINT, "TERM": signal.SIGTERM, "HUP": signal.SIGHUP}


@dataclass
class Moment:
    signal: str
    delay: float
    exit_code: int | None
    seconds: float
    survivors: int
    leftovers: list[str]
    report: str  # "none", "incomplete", "complete"
    problems: list[str]


def _survivors(tmpdir: str) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get("TMPDIR") == tmpdir:
                found.append(process)
        except psutil.Error:
            continue
    return found


def _as_from_a_terminal() -> None:
    """Signals as an interactive shell leaves them (a background job would ignore SIGINT)."""
    for sig in SIGNALS.values():
        signal.signal(sig, signal.SIG_DFL)


def moment(name: str, delay: float, argv: list[str], grace: float) -> Moment:
    work = Path(tempfile.mkdtemp(prefix="ahp-moment-"))
    tmpdir = work / "tmp"
    tmpdir.mkdir()
    output = work / "out" / "report.json"
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    command = [sys.executable, "-m", "interop", "matrix", "--output", str(output), "--quiet", *argv]
    harness = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_as_from_a_terminal,
    )
    time.sleep(delay)
    sent_at = time.monotonic()
    if harness.poll() is None:
        harness.send_signal(SIGNALS[name])
    problems: list[str] = []
    try:
        harness.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        problems.append(f"still running {grace:.0f}s after the signal")
        harness.kill()
        harness.wait()
    seconds = time.monotonic() - sent_at
    survivors = _survivors(str(tmpdir))
    for process in survivors:
        process.kill()
    if survivors:
        problems.append(f"{len(survivors)} process(es) survived")
    leftovers = sorted(p.name for p in tmpdir.iterdir())
    if leftovers:
        problems.append(f"left in TMPDIR: {', '.join(leftovers)}")
    report = "none"
    if output.exists():
        try:
            report = "incomplete" if json.loads(output.read_text())["incomplete"] else "complete"
        except (ValueError, KeyError):
            problems.append("the report is not valid JSON")
    if harness.returncode == 130 and report == "complete":
        problems.append("interrupted, yet the report is not marked incomplete")
    if harness.returncode not in (0, 1, 130, -SIGNALS[name]):
        stderr = (harness.stderr.read() if harness.stderr else b"").decode(errors="replace")
        problems.append(f"exit {harness.returncode}: {stderr.strip()[-300:]}")
    if harness.returncode == -SIGNALS[name] and (leftovers or survivors):
        problems.append("killed by the signal before it could clean up")
    shutil.rmtree(work, ignore_errors=True)
    return Moment(
        name, delay, harness.returncode, seconds, len(survivors), leftovers, report, problems
    )


def undisturbed(argv: list[str]) -> float:
    work = Path(tempfile.mkdtemp(prefix="ahp-moment-"))
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "interop",
            "matrix",
            "--output",
            str(work / "r.json"),
            "--quiet",
            *argv,
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    shutil.rmtree(work, ignore_errors=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moments", type=int, default=50, help="moments per signal")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--grace", type=float, default=10.0, help="seconds allowed after a signal")
    parser.add_argument("matrix", nargs="*", help="arguments for python -m interop matrix")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    length = undisturbed(args.matrix)
    print(f"seed {seed}; an undisturbed run takes {length:.1f}s", flush=True)
    broken = 0
    endings: dict[str, int] = {}
    for name in SIGNALS:
        for number in range(args.moments):
            delay = rng.uniform(0.0, length)
            result = moment(name, delay, args.matrix, args.grace)
            key = f"exit {result.exit_code}, report {result.report}"
            endings[key] = endings.get(key, 0) + 1
            status = "ok" if not result.problems else "BROKEN " + "; ".join(result.problems)
            broken += bool(result.problems)
            print(
                f"SIG{name} #{number + 1:02d} at {delay:5.2f}s: exit {result.exit_code} after "
                f"{result.seconds:.2f}s, report {result.report}: {status}",
                flush=True,
            )
    total = args.moments * len(SIGNALS)
    print(f"{total - broken} of {total} moments clean; endings: {json.dumps(endings)}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
