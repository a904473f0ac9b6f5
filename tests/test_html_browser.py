"""The HTML report in a real headless browser (Debian's Chromium, driven by its own CLI).

Two reports: a real run of the fake adapters (one honest, one whose client lies on
one row) written by the harness itself, and a document built by hand with a
failing core row, a combination error, hostile text, logs and a scenario file.
Chromium loads each page from a file URL with a fragment, runs its script, and
dumps the DOM; the test reads that DOM. Screenshots go to reports/screenshots/
(git-ignored) for review. A missing Chromium fails the test: CI installs it.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.cli import main
from interop.report.html import build_html
from tests.conftest import FAKE, matrix_argv

SCREENSHOTS = ROOT / "reports" / "screenshots"
HOSTILE = "<script>window.PWNED=1</script><img src=x onerror=alert(1)>"


def chromium() -> str:
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        pytest.fail("chromium is missing: apt-get install -y chromium (.ci/run does this)")
    return found


def browse(page: Path, fragment: str = "", *, screenshot: Path | None = None) -> str:
    """The DOM after the page's script ran (or, with `screenshot`, a PNG written there)."""
    profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=page.parent)
    argv = [
        chromium(),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
    ]
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        argv += [f"--screenshot={screenshot}", "--window-size=1400,1000"]
    else:
        argv.append("--dump-dom")
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    done = subprocess.run([*argv, url], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    if screenshot is not None:
        assert screenshot.exists() and screenshot.stat().st_size > 1000
        return ""
    assert 'data-ready="1"' in done.stdout, "the page's script did not finish"
    return done.stdout


def badges(dom: str) -> dict[str, str]:
    """Badge id -> its class list, as the script left them."""
    return dict(
        (m.group(2), m.group(1)) for m in re.finditer(r'<a class="badge ([^"]*)" id="(b\d+)"', dom)
    )


def view(dom: str) -> str:
    found = re.search(r'<section id="view"[^>]*>(.*?)</section>', dom, re.S)
    assert found, "no combination view in the DOM"
    return found.group(1)


# -- a real run of fake adapters ------------------------------------------------------


def _adapter(root: Path, name: str, client: str) -> Path:
    directory = root / "adapters" / name
    directory.mkdir(parents=True)
    manifest = {
        "language": "fake",
        "client": [sys.executable, str(FAKE), "client", "--behaviour", client],
        "server": [sys.executable, str(FAKE), "server", "--behaviour", "honest"],
        "extensions": {"receiptLog": True, "serverReuse": True, "profiles": ["strict"]},
    }
    (directory / "adapter.json").write_text(json.dumps(manifest))
    return directory


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("fake-run")
    upstream = json.loads((ROOT / "scenarios" / "upstream" / "scenarios.json").read_text())
    wanted = ["empty-response-preserves-input", "deny-blocks", "wrong-response-id"]
    rows = [s for s in upstream["scenarios"] if s["id"] in wanted]
    small = root / "small.json"
    small.write_text(json.dumps({"version": 1, "scenarios": rows}, indent=1))
    dirs = [_adapter(root, "honest", "honest"), _adapter(root, "liar", "lie")]
    output = root / "out" / "report.json"
    code = main(matrix_argv(dirs, small, output, "--timeout", "20", "--transports", "http"))
    assert code == 1  # the liar's rows fail
    return output.with_name("report.html"), json.loads(output.read_text())


def test_grid_renders_a_cell_per_pair(fake_run: tuple[Path, dict[str, Any]]) -> None:
    page, document = fake_run
    dom = browse(page)
    pairs = set(re.findall(r'<td class="cell[^"]*" data-pair="([^"]+)"', dom))
    expected = {f"{c}-&gt;{s}" for c in ("honest", "liar") for s in ("honest", "liar")}
    assert pairs == expected
    assert len(badges(dom)) == len(document["combinations"])
    assert '<span class="lang">fake</span>' in dom  # the adapters' language
    browse(page, screenshot=SCREENSHOTS / "grid.png")


def test_status_filter_leaves_only_failing_badges(fake_run: tuple[Path, dict[str, Any]]) -> None:
    page, document = fake_run
    dom = browse(page, "status=failed")
    shown = {k: v for k, v in badges(dom).items() if "hidden" not in v.split()}
    failed = [c for c in document["combinations"] if c["status"] == "failed"]
    assert failed and len(shown) == len(failed)
    assert all(v.split()[0] == "failed" for v in shown.values())
    assert re.search(r'<option value="failed"[^>]*>failed \(\d+\)</option>', dom)
    assert f"showing {len(failed)} of {len(document['combinations'])} combinations" in dom


def test_a_badge_opens_a_failing_combination_of_the_run(
    fake_run: tuple[Path, dict[str, Any]],
) -> None:
    page, document = fake_run
    combo = next(c for c in document["combinations"] if c["status"] == "failed")
    key = f"core/{combo['client']}->{combo['server']}/{combo['transport']}/{combo['auth']}"
    shown = view(browse(page, f"combo={key}"))
    assert 'class="diff"' in shown and 'class="rerun"' in shown
    # a failed row's re-run is its repro bundle's script, linked beside it
    assert "/rerun.sh" in shown and "repro bundle" in shown
    assert "rule ClientResult judges the client" in shown
    assert 'class="log"' in shown  # the log tails are embedded


# -- a document built by hand -----------------------------------------------------------


def _document(root: Path) -> dict[str, Any]:
    core_rows = [
        {
            "id": "tool.decision",
            "request": {"method": "hooks/intercept", "params": {"event": {"type": "tool.before"}}},
            "response": {"result": {"effects": [{"type": "deny"}]}},
            "expected": {"decision": "deny", "messages": ["no"], "input": {"path": "a"}},
            "tags": ["decision"],
        },
        {"id": "tool.ok", "request": {}, "response": {}, "expected": {"decision": "allow"}},
        {"id": HOSTILE, "request": {}, "response": {}, "expected": {"x": 1}, "tags": ["odd"]},
    ]
    (root / "scenarios").mkdir()
    (root / "scenarios" / "core.json").write_text(json.dumps({"scenarios": core_rows}))
    counts = {"passed": 0, "failed": 0, "unsupported": 0, "inapplicable": 0, "not-run": 0}

    def combination(client: str, server: str, auth: str, **kw: Any) -> dict[str, Any]:
        return {
            "suite": "core",
            "client": client,
            "server": server,
            "transport": "http",
            "auth": auth,
            "status": "passed",
            "errors": [],
            "counts": {**counts, "passed": 3},
            "results": {"core": {"digests": ["aaaaaaaaaaaa"] * 3, "rows": []}},
            **kw,
        }

    failing = {
        "id": "tool.decision",
        "status": "failed",
        "adapterStatus": "completed",
        "error": '$.decision: expected "deny", got "allow"',
        "actual": {"decision": "allow", "input": {"path": "a", "extra": True}},
    }
    hostile_row = {"id": HOSTILE, "status": "failed", "error": HOSTILE}
    combos = [
        combination("python", "python", "none"),
        combination(
            "python",
            "typescript",
            "bearer",
            status="failed",
            counts={**counts, "passed": 1, "failed": 2},
            results={
                "core": {"digests": [None, "bbbbbbbbbbbb", None], "rows": [failing, hostile_row]}
            },
        ),
        combination(
            "typescript",
            "python",
            "none",
            status="failed",
            counts={**counts, "failed": 3},
            errors=[{"stage": "client", "class": "ClientCrashed", "message": HOSTILE}],
            results={
                "core": {
                    "digests": [None, None, None],
                    "rows": [
                        {"id": r["id"], "status": "failed", "error": "client crashed"}
                        for r in core_rows
                    ],
                }
            },
        ),
        combination(
            "typescript",
            "typescript",
            "bearer",
            status="inapplicable",
            reason="stdio has no authentication",
            counts=counts,
            results={},
        ),
    ]
    sets = [
        {
            "suite": "core",
            "name": "core",
            "file": "scenarios/core.json",
            "sha256": "ab" * 32,
            "scenarios": 3,
            "rows": [{"id": r["id"], "expected": r["expected"]} for r in core_rows],
        }
    ]
    return {
        "reportVersion": 3,
        "revision": "0123456789abcdef",
        "profile": "strict",
        "suites": ["core"],
        "adapters": {
            "python": {"language": "python", "blind": True, "version": "0.1.0"},
            "typescript": {"language": "typescript", "blind": True},
        },
        "incomplete": False,
        "summary": {
            "combinations": {**counts, "passed": 1, "failed": 2, "inapplicable": 1},
            "rows": {**counts, "passed": 4, "failed": 5},
            "suites": {"core": {"combinations": counts, "rows": counts}},
        },
        "sets": sets,
        "combinations": combos,
    }


@pytest.fixture(scope="module")
def made_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("made")
    logs = root / "report-logs"
    folder = logs / "python--typescript--http--bearer"
    folder.mkdir(parents=True)
    (folder / "client-core.log").write_text(
        "".join(f"line {n}\n" for n in range(100)) + HOSTILE + "\n"
    )
    document = _document(root)
    page = root / "report.html"
    page.write_bytes(
        build_html(document, run={"date": "2026-05-01T10:00:00Z"}, logs_dir=logs, root=root)
    )
    return page


def test_deep_link_opens_the_failing_rows_diff(made_page: Path) -> None:
    dom = browse(made_page, "suite=core&status=failed&combo=core/python->typescript/http/bearer")
    shown = view(dom)
    assert "core: python → typescript [http/bearer]" in shown
    diff = re.search(r'<table class="diff">(.*?)</table>', shown, re.S)
    assert diff, "no structural diff"
    rows = re.findall(r'<tr class="(\w+)"><td><code>([^<]*)</code>', diff.group(1))
    assert rows == [
        ("changed", "$.decision"),
        ("added", "$.input.extra"),
        ("removed", "$.messages"),
    ]
    assert '<td class="exp">"deny"</td><td class="act">"allow"</td>' in diff.group(1)
    assert "--scenarios scenarios/core.json --scenario 'tool.decision' --clients python" in shown
    assert "&quot;hooks/intercept&quot;" in shown or '"hooks/intercept"' in shown  # the request
    assert "line 99" in shown and "line 59" not in shown  # the tail only
    assert 'class="badge failed current"' in dom
    browse(
        made_page,
        "combo=core/python->typescript/http/bearer",
        screenshot=SCREENSHOTS / "combination.png",
    )


def test_combination_errors_and_filters_on_the_made_page(made_page: Path) -> None:
    shown = view(browse(made_page, "combo=core/typescript->python/http/none"))
    assert "ClientCrashed" in shown and "Rows that did not pass: 3" in shown
    assert "No actual" in shown
    dom = browse(made_page, "status=passed")
    visible = [v for v in badges(dom).values() if "hidden" not in v.split()]
    assert visible == ["passed"]
    dom = browse(made_page, "tag=decision")
    assert re.search(r'<option value="decision"[^>]*>decision \(3\)</option>', dom)
    assert "rows tagged decision: 1 passed, 2 failed" in dom


def test_untrusted_text_stays_text(made_page: Path) -> None:
    dom = browse(made_page, "combo=core/typescript->python/http/none")
    assert "<img" not in dom and "<script>window" not in dom
    assert "&lt;script&gt;window.PWNED=1&lt;/script&gt;" in dom
    dom = browse(made_page, "combo=core/python->typescript/http/bearer")
    assert "<img" not in dom and "&lt;img src=x" in dom  # the id, the error and the log
