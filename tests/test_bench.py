"""`python -m interop bench`: its pieces on real processes and sockets, never its times.

No test here asserts how long anything took: benchmarks are a separate command.
The tests check that each figure is measured (a count, a positive duration, the
fields of bench.json) and that the replicated core set is a valid set of fresh rows.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from interop import ROOT
from interop.bench import floor
from interop.bench.run import CORE_SET, MatrixRun, _marginal, render, replicate
from interop.bench.sampler import watch
from interop.cli import main
from interop.redact import Redactor
from interop.suites.core.suite import load_sets
from interop.trust import Trust
from tests.conftest import named


def test_replicated_core_set_has_fresh_ids_and_loads(tmp_path: Path) -> None:
    target = tmp_path / "core-x2.json"
    original = json.loads(CORE_SET.read_text(encoding="utf-8"))["scenarios"]
    assert replicate(CORE_SET, 2, target) == 2 * len(original)
    rows = json.loads(target.read_text(encoding="utf-8"))["scenarios"]
    ids = [r["id"] for r in rows]
    assert len(set(ids)) == len(ids)
    copy = rows[len(original)]
    assert copy["id"] == original[0]["id"] + "-r2"
    assert copy["request"]["id"] == copy["id"]
    assert copy["request"]["params"]["event"]["id"] == copy["id"]
    load_sets([target])  # the core suite's own loader accepts it (no duplicate ids)


def test_floor_measures_each_kind(tmp_path: Path) -> None:
    http = floor.http_round_trips(50)
    assert (http.count, http.seconds > 0) == (50, True)
    trust = Trust.create(Redactor(), parent=tmp_path)
    try:
        tls = floor.tls_handshakes(
            3,
            Path(trust.path("server.pem")),
            Path(trust.path("server-key.pem")),
            Path(trust.path("ca.pem")),
        )
    finally:
        trust.destroy()
    assert (tls.count, tls.seconds > 0) == (3, True)
    starts = floor.process_starts(3)
    assert starts.as_json()["count"] == 3
    assert floor.http_round_trips(0).as_json() == {"count": 0, "seconds": 0.0, "msEach": 0.0}


def test_sampler_sees_the_children_and_their_memory(tmp_path: Path) -> None:
    script = (
        "import subprocess, sys; "
        "subprocess.run([sys.executable, '-c', 'import time; time.sleep(0.4)'])"
    )
    watched = watch([sys.executable, "-c", script], cwd=tmp_path, log=tmp_path / "log")
    assert watched.returncode == 0
    assert watched.processes_seen >= 1
    assert watched.peak_rss > 0
    assert 0 < watched.adapter_seconds <= watched.wall


def _run(label: str, seconds: dict[str, float], rows: int) -> MatrixRun:
    entries = []
    for key in seconds:
        client, server = key.split("/")
        entries.append(
            {
                "suite": "core",
                "client": client,
                "server": server,
                "transport": "http",
                "auth": "none",
                "counts": {"passed": rows, "inapplicable": 7},
            }
        )
    timings = {
        "combinations": {f"core/{k.replace('/', '--')}--http--none": v for k, v in seconds.items()}
    }
    return MatrixRun(
        label,
        watch([sys.executable, "-c", ""], cwd=ROOT, log=Path("/dev/null")),
        {"combinations": entries},
        timings,
    )


def test_marginal_cost_is_per_extra_row_by_client() -> None:
    base = _run("core", {"go/python": 1.0, "python/go": 2.0}, 100)
    bigger = _run("core-x2", {"go/python": 1.1, "python/go": 2.6}, 300)
    assert _marginal(base, bigger) == {"go": 0.5, "python": 3.0}


def test_render_names_every_figure() -> None:
    result = {
        "jobs": 2,
        "noopBuildSeconds": 0.4,
        "core": {"wallSeconds": 10.0, "combinations": 4},
        "coreJobs1": {"wallSeconds": 18.0},
        "jobsWalls": {"jobs": [10.5, 10.0], "jobs1": [18.0, 19.0]},
        "jobsSpeedup": 1.8,
        "startup": {"go": {"serverMs": 5.0, "clientMs": 7.0}, "x": {"error": "boom"}},
    }
    text = render(result)
    for fragment in (
        "no-op build: 0.4 s",
        "x1.8 (18.0 s -> 10.0 s",
        "jobs1: 18.0 s, 19.0 s",
        "start-up go: server 5.0 ms",
        "failed: boom",
    ):
        assert fragment in text


def test_bench_command_writes_its_figures(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    code = main(["bench", "--adapters", "python", "--parts", "startup", "--output", str(output)])
    assert code == 0
    result = json.loads(output.read_text(encoding="utf-8"))
    startup = result["startup"]["python"]
    assert startup["serverMs"] > 0 and startup["clientMs"] > 0
    assert result["failedRuns"] == []


def test_a_failed_run_keeps_its_log_and_its_report_logs(
    tmp_path: Path, fake_adapter: Callable[..., Path]
) -> None:
    broken = fake_adapter("broken", client="crash")
    output = tmp_path / "out" / "bench.json"
    argv = ["bench", "--adapter-dir", named(broken), "--adapters", "broken"]
    argv += ["--adapters-root", str(tmp_path / "none"), "--parts", "jobs"]
    assert main([*argv, "--output", str(output)]) == 1
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["failedRuns"] == ["core", "core-2", "core-jobs-1", "core-jobs-1-2"]
    assert [len(walls) for walls in result["jobsWalls"].values()] == [2, 2]
    kept = output.parent / "bench-failed"
    assert (kept / "core.log").read_text(encoding="utf-8").strip()
    assert any((kept / "core-logs").rglob("*.log"))  # the harness's and the processes' logs
