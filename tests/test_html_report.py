"""The HTML page as bytes (no browser): header facts, coverage, escaping, embedded data."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from interop.report.html import build_html
from tests.test_html_browser import HOSTILE, _document


def page(tmp_path: Path, document: dict[str, Any] | None = None, **kw: Any) -> str:
    doc = document if document is not None else _document(tmp_path)
    return build_html(doc, root=tmp_path, **kw).decode("utf-8")


def data(html: str) -> dict[str, Any]:
    found = re.search(r"<script type='application/json' id='report-data'>(.*?)</script>", html)
    assert found
    loaded: dict[str, Any] = json.loads(found.group(1))
    return loaded


def test_header_shows_what_the_report_knows(tmp_path: Path) -> None:
    document = _document(tmp_path)
    html = page(tmp_path, document, run={"date": "2026-05-01T10:00:00Z", "totalSeconds": 12.5})
    assert "0123456789abcdef" in html and "2026-05-01T10:00:00Z" in html
    assert "<td>0.1.0</td>" in html  # an adapter's version
    assert "ab" * 32 in html and "scenarios/core.json" in html
    assert "run-date" not in page(tmp_path, document)  # no run: no date


def test_untrusted_text_is_escaped_in_markup_and_data(tmp_path: Path) -> None:
    document = _document(tmp_path)
    document["adapters"][HOSTILE] = {"language": HOSTILE}
    document["combinations"][0]["client"] = HOSTILE
    html = page(tmp_path, document=document)
    script = html.index("<script type='application/json'")
    assert "<img" not in html and "<script>window" not in html[:script]
    assert "</script" not in data_text(html)
    assert data(html)["combos"][0]["client"] == HOSTILE  # intact once parsed


def data_text(html: str) -> str:
    start = html.index("id='report-data'>") + len("id='report-data'>")
    return html[start : html.index("</script>", start)]


def test_passed_rows_are_counted_not_rendered(tmp_path: Path) -> None:
    document = _document(tmp_path)
    many = document["combinations"][0]
    many["results"]["core"]["digests"] = ["cccccccccccc"] * 3
    embedded = data(page(tmp_path, document=document))
    first = embedded["combos"][0]
    assert first["failing"] == [] and first["rows"] == {} and first["n"] == {"0": 3}
    assert "<article" not in page(tmp_path, document=document)  # rows are built by the script


def test_scenario_rows_and_a_missing_file(tmp_path: Path) -> None:
    embedded = data(page(tmp_path))
    assert embedded["scenarios"]["0/tool.decision"]["kind"] == "core"
    assert set(embedded["scenarios"]["0/tool.decision"]["row"]) == {"request", "response", "tags"}
    assert embedded["sets"][0]["tags"] == {"decision": [0], "odd": [2]}
    other = tmp_path / "elsewhere"
    other.mkdir()
    document = _document(other)
    (other / "scenarios" / "core.json").unlink()
    missing = data(build_html(document, root=other).decode())
    assert "not found" in missing["sets"][0]["missing"]


def test_log_tails_are_embedded(tmp_path: Path) -> None:
    logs = tmp_path / "report-logs"
    (logs / "python--typescript--http--bearer").mkdir(parents=True)
    (logs / "python--typescript--http--bearer" / "client-core.log").write_text(
        "".join(f"line {n}\n" for n in range(50))
    )
    (logs / "python--typescript--http--bearer" / "client-lifecycle.log").write_text("other\n")
    (logs / "servers").mkdir()
    (logs / "servers" / "typescript--http--bearer.log").write_text("server says hi\n")
    embedded = data(page(tmp_path, logs_dir=logs))
    combo = next(c for c in embedded["combos"] if c["key"] == "core/python->typescript/http/bearer")
    assert combo["logs"] == [
        "python--typescript--http--bearer/client-core.log",
        "servers/typescript--http--bearer.log",
    ]
    tail = embedded["logs"][combo["logs"][0]].splitlines()
    assert tail[0] == "[... 10 earlier lines]" and tail[1] == "line 10" and len(tail) == 41


def test_coverage_lists_must_failures_apart(tmp_path: Path) -> None:
    document = _document(tmp_path)
    document["coverage"] = {
        "requirements": [
            {"id": "AHP-A", "level": "MUST", "title": "a must", "features": ["x"]},
            {"id": "AHP-B", "level": "SHOULD", "title": "a should", "features": ["y"]},
            {"id": "AHP-C", "level": "MAY", "title": "a may", "features": []},
        ],
        "byAdapter": {
            "python": {
                "client": {
                    "requirements": {"AHP-A": "failed", "AHP-B": "failed", "AHP-C": "passed"},
                    "features": {"x": "failed", "y": "failed"},
                },
                "server": {"requirements": {"AHP-A": "untested"}},
            },
            "typescript": {"client": "garbage"},
        },
    }
    html = page(tmp_path, document=document)
    must = re.search(r"<ul class='must-failures'>(.*?)</ul>", html)
    other = re.search(r"<ul class='other-failures'>(.*?)</ul>", html)
    assert must and "AHP-A" in must.group(1) and "AHP-B" not in must.group(1)
    assert other and "AHP-B" in other.group(1) and "AHP-A" not in other.group(1)
    assert "<b>python</b> as server: 1 untested" in html


def test_absent_or_partial_coverage_is_skipped(tmp_path: Path) -> None:
    document = _document(tmp_path)
    for coverage in (None, {}, {"requirements": "x"}, [], "x"):
        document["coverage"] = coverage
        assert "id='coverage'" not in page(tmp_path, document)
    document["coverage"] = {"byAdapter": {"p": None, "q": {"client": {"requirements": None}}}}
    assert "id='coverage'" in page(tmp_path, document)  # a section saying nothing failed
