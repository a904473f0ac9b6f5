"""The pinned requirement table (interop/coverage/requirements.json), the conformance
profiles judged from a coverage result, and `python -m interop requirements --spec`
against spec folders written here from sentences invented for the test (never the
spec's own)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from interop.cli import main
from interop.coverage import LEVELS, coverage, coverage_lines, load_profiles, load_requirements
from interop.coverage.profiles import claim, profile_verdicts
from interop.coverage.speccheck import check_spec, requirement_line
from interop.report.html import build_html
from tests.test_html_browser import _document as html_document

SPEC_LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
PROFILES = ("base", "http", "lifecycle-observation", "stdio", "tool-interception")


# ---------------------------------------------------------------------------------------
# the pinned table


def test_the_pinned_table_loads_with_unique_ids_and_the_spec_levels() -> None:
    assert LEVELS == SPEC_LEVELS
    table = load_requirements()
    ids = [e["id"] for e in table]
    assert len(ids) == len(set(ids)) == 26
    for entry in table:
        assert entry["level"] in SPEC_LEVELS, entry["id"]
        if entry["id"].startswith("AHP-"):
            assert re.fullmatch(r"[0-9a-f]{64}", entry["textSha256"]), entry["id"]
            assert entry["profile"] in PROFILES, entry["id"]
    assert {e["level"] for e in table} == {"MUST", "MUST NOT"}


def test_the_pinned_profiles_are_the_five_canonical_ones_over_the_table() -> None:
    table = {e["id"]: e for e in load_requirements()}
    profiles = {p["id"]: p for p in load_profiles()}
    assert tuple(sorted(profiles)) == PROFILES
    listed: dict[str, list[str]] = {}
    for pid, profile in profiles.items():
        assert set(profile["roles"]) == {"harness", "backend"}
        assert len(set(profile["requirements"])) == len(profile["requirements"])
        for rid in profile["requirements"]:
            assert rid in table, (pid, rid)
            listed.setdefault(rid, []).append(pid)
    # every canonical requirement is in a profile; each requirement's own `profile`
    # is one listing it, except where the spec itself disagrees (its manifest lists
    # AHP-CORE-004 under tool-interception, its requirements.json says base)
    assert set(listed) == {rid for rid in table if rid.startswith("AHP-")}
    mismatched = {rid for rid, pids in listed.items() if table[rid]["profile"] not in pids}
    assert mismatched == {"AHP-CORE-004"}


def _write(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def _loads(tmp_path: Path, *entries: dict[str, Any]) -> list[dict[str, Any]]:
    return load_requirements(_write(tmp_path / "t.json", {"requirements": list(entries)}))


def _canonical(rid: str, **changes: Any) -> dict[str, Any]:
    entry = {
        "id": rid,
        "level": "MUST",
        "profile": "base",
        "document": "spec/draft/a.md",
        "anchor": rid,
        "section": "A",
        "textSha256": "0" * 64,
        "title": "t",
        "features": [],
        "fixtures": [],
    }
    entry.update(changes)
    return entry


def test_a_table_with_a_duplicate_an_unmarked_id_or_an_unanchored_own_rule_is_refused(
    tmp_path: Path,
) -> None:
    ours = {
        "id": "IMX-WIDGET-001",
        "level": "SHOULD NOT",
        "title": "ours",
        "features": ["effect:deny"],
        "refines": "AHP-WIDGET-001",
        "source": "why we test it",
    }
    loaded = _loads(tmp_path, _canonical("AHP-WIDGET-001"), ours)
    assert [e["id"] for e in loaded] == ["AHP-WIDGET-001", "IMX-WIDGET-001"]
    section = {"document": "spec/draft/a.md", "section": "A"}
    assert _loads(tmp_path, {**ours, "refines": section})[0]["refines"] == section
    bad = [
        (_canonical("AHP-WIDGET-001"), _canonical("AHP-WIDGET-001")),  # listed twice
        ({**ours, "id": "WIDGET-001"},),  # neither AHP- nor IMX-
        ({**ours, "refines": "AHP-NOWHERE-001"},),  # refines nothing in the table
        ({**ours, "refines": {"document": "elsewhere.md", "section": "A"}},),
        (_canonical("AHP-WIDGET-001", level="MUST_NOT"),),
        (_canonical("AHP-WIDGET-001", features=["effect:teleport"]),),
        ({k: v for k, v in _canonical("AHP-WIDGET-001").items() if k != "textSha256"},),
    ]
    for entries in bad:
        with pytest.raises(ValueError):
            _loads(tmp_path, *entries)


# ---------------------------------------------------------------------------------------
# profiles judged from a coverage result


def _statuses(**by_id: str) -> dict[str, Any]:
    return {"requirements": by_id}


def test_a_profile_is_met_failed_or_untested_per_adapter_and_role() -> None:
    profiles = [
        {"id": "p", "roles": ["harness", "backend"], "requirements": ["AHP-A-001", "AHP-B-001"]},
        {"id": "q", "roles": ["backend"], "requirements": ["AHP-B-001"]},
    ]
    by_adapter = {
        "alpha": {
            "client": _statuses(**{"AHP-A-001": "passed", "AHP-B-001": "passed"}),
            "server": _statuses(**{"AHP-A-001": "failed", "AHP-B-001": "untested"}),
        },
        "beta": {
            "client": _statuses(**{"AHP-A-001": "passed", "AHP-B-001": "untested"}),
            "server": _statuses(**{"AHP-A-001": "passed", "AHP-B-001": "undetermined"}),
        },
        "gamma": {"client": _statuses(**{"AHP-A-001": "passed"}), "server": {}},
    }
    result = profile_verdicts(by_adapter, profiles)
    assert list(result) == ["p", "q"]
    assert result["p"]["roles"] == ["client", "server"]  # harness = client, backend = server
    assert result["q"]["roles"] == ["server"]
    assert result["p"]["verdicts"] == {
        "alpha": {"client": "met", "server": "failed"},  # one failed fails the claim
        "beta": {"client": "untested", "server": "untested"},  # undetermined is not met
        "gamma": {"client": "untested", "server": "untested"},  # a requirement absent
    }
    assert result["q"]["verdicts"]["alpha"] == {"server": "untested"}
    assert claim({}, []) == "untested"  # a profile of nothing is claimed by nothing
    assert json.dumps(result) == json.dumps(result, sort_keys=True)


def test_coverage_gives_every_canonical_profile_a_verdict_and_a_terminal_line() -> None:
    document = {
        "reportVersion": 3,
        "adapters": ["alpha", "beta"],
        "sets": [],
        "combinations": [],
    }
    result = coverage(document, Path("."))
    assert tuple(result["profiles"]) == PROFILES
    for profile in result["profiles"].values():
        assert profile["verdicts"] == {
            a: {"client": "untested", "server": "untested"} for a in ("alpha", "beta")
        }
    # the result's requirements carry the pinned facts
    first = result["requirements"][0]
    assert set(first) == {
        "anchor", "document", "features", "id", "level", "profile", "section", "textSha256",
        "title",
    }  # fmt: skip
    assert coverage_lines(result) == []  # a role no row gave an adapter prints no line
    judged = result["byAdapter"]["alpha"]["client"]["requirements"]
    judged["AHP-AUTH-001"] = "passed"  # alpha played the client in some row
    lines = coverage_lines(result)
    profile_lines = [line for line in lines if line.startswith("  profiles: ")]
    assert len(profile_lines) == 1  # one per adapter and role that ran
    assert lines[0].startswith("coverage alpha as client: 1 passed")
    assert "base untested" in profile_lines[0] and "tool-interception untested" in profile_lines[0]


def test_a_failed_profile_names_its_failed_requirements_in_the_terminal_and_html(
    tmp_path: Path,
) -> None:
    requirements = {r["id"]: "passed" for r in load_requirements()}
    broken = dict(requirements, **{"AHP-DEC-002": "failed"})
    by_adapter = {
        "alpha": {"client": {"requirements": broken}, "server": {"requirements": requirements}}
    }
    result = {
        "byAdapter": by_adapter,
        "profiles": profile_verdicts(by_adapter, load_profiles()),
        "requirements": [{"id": r["id"], "level": r["level"]} for r in load_requirements()],
    }
    verdicts = {p: v["verdicts"]["alpha"] for p, v in result["profiles"].items()}
    assert verdicts["tool-interception"] == {"client": "failed", "server": "met"}
    assert verdicts["base"] == {"client": "met", "server": "met"}
    lines = coverage_lines(result)
    assert "  profiles: base met; http met; lifecycle-observation met; stdio met; " in lines[1]
    assert lines[1].endswith("tool-interception failed (AHP-DEC-002)")
    page_document = html_document(tmp_path)
    page_document["coverage"] = result
    html = build_html(page_document, root=tmp_path).decode("utf-8")
    table = re.search(r"<h3>Conformance profiles</h3><table class='profiles'>(.*?)</table>", html)
    assert table
    assert "<td><b>alpha</b></td><td>client</td>" in table.group(1)
    assert "<td class='failed'>failed</td>" in table.group(1)
    assert "<td class='passed'>met</td>" in table.group(1)


# ---------------------------------------------------------------------------------------
# `python -m interop requirements --spec PATH`

# sentences invented for these tests: id -> (level, document, section, text)
INVENTED = {
    "AHP-WIDGET-001": ("MUST", "spec/draft/widgets.md", "Colours", "Every widget is painted blue."),
    "AHP-WIDGET-002": (
        "MUST NOT",
        "spec/draft/widgets.md",
        "Shapes",
        "A widget is never square, and a `round` widget stays round.",
    ),
    "AHP-GADGET-001": ("SHOULD", "spec/draft/gadgets.md", "Sounds", "A gadget hums — quietly."),
}


def _sha(rid: str, level: str, text: str) -> str:
    return hashlib.sha256(requirement_line(rid, level, text).encode("utf-8")).hexdigest()


def _spec_folder(root: Path) -> Path:
    """A spec checkout: requirements.json with texts and hashes, the documents that
    state them (anchor, heading, requirement line), the conformance manifest."""
    listed = []
    documents: dict[str, list[str]] = {}
    for rid, (level, document, section, text) in INVENTED.items():
        listed.append(
            {
                "id": rid,
                "status": "active",
                "level": level,
                "document": document,
                "anchor": rid,
                "section": section,
                "profile": "base",
                "text": text,
                "textSha256": _sha(rid, level, text),
            }
        )
        documents.setdefault(document, ["# A document", ""]).extend(
            [f"## {section}", "", f'<a id="{rid}"></a>', requirement_line(rid, level, text), ""]
        )
    _write(root / "spec/draft/requirements.json", {"status": "draft", "requirements": listed})
    for name, lines in documents.items():
        _write(root / name, "\n".join(lines))
    _write(root / "conformance/draft/manifest.json", {"profiles": [_profile()]})
    return root


def _profile() -> dict[str, Any]:
    return {
        "id": "base",
        "path": "conformance/draft/profiles/base.md",
        "sha256": "1" * 64,
        "roles": ["harness", "backend"],
        "requirements": sorted(INVENTED),
    }


def _pinned_table(path: Path) -> Path:
    """Our pinned table for the invented spec: facts and hashes, no text."""
    entries = [
        {
            "id": rid,
            "level": level,
            "profile": "base",
            "document": document,
            "anchor": rid,
            "section": section,
            "textSha256": _sha(rid, level, text),
            "title": "our words",
            "features": [],
            "fixtures": [],
        }
        for rid, (level, document, section, text) in INVENTED.items()
    ]
    return _write(path, {"profiles": [_profile()], "requirements": entries})


def _run(spec: Path, pinned: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["requirements", "--spec", str(spec), "--pinned", str(pinned)])
    return code, capsys.readouterr().out.splitlines()


def test_requirements_spec_passes_on_a_spec_folder_that_matches_the_pinned_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec_folder(tmp_path / "spec")
    code, lines = _run(spec, _pinned_table(tmp_path / "pinned.json"), capsys)
    assert code == 0, lines
    assert lines == [f"requirements: {tmp_path / 'pinned.json'} (3 pinned) matches {spec}"]


def test_requirements_spec_detects_an_edited_sentence_in_a_copied_spec_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Done-when of issue 27: the document's sentence changed, its
    requirements.json was not regenerated, and the check still names it."""
    pinned = _pinned_table(tmp_path / "pinned.json")
    copy = tmp_path / "copy"
    shutil.copytree(_spec_folder(tmp_path / "spec"), copy)
    document = copy / "spec/draft/widgets.md"
    document.write_text(
        document.read_text(encoding="utf-8").replace("painted blue", "painted green"),
        encoding="utf-8",
    )
    assert check_spec(tmp_path / "spec", pinned) == []  # the original still matches
    code, lines = _run(copy, pinned, capsys)
    assert code == 1
    (finding,) = lines[:-1]
    assert finding.startswith("AHP-WIDGET-001: edited: the sentence in spec/draft/widgets.md ")
    assert f"pinned {_sha('AHP-WIDGET-001', 'MUST', INVENTED['AHP-WIDGET-001'][3])}" in finding
    assert "re-pin it in " in finding
    assert lines[-1].endswith(f"1 finding(s) against {copy}")


def test_requirements_spec_names_every_drifted_new_and_removed_requirement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec_folder(tmp_path / "spec")
    pinned = _pinned_table(tmp_path / "pinned.json")
    path = spec / "spec/draft/requirements.json"
    listed = json.loads(path.read_text(encoding="utf-8"))
    entries = {e["id"]: e for e in listed["requirements"]}
    # reworded and re-hashed in the list (and in its document)
    reworded = "Every widget is painted blue or grey."
    entries["AHP-WIDGET-001"].update(
        text=reworded, textSha256=_sha("AHP-WIDGET-001", "MUST", reworded)
    )
    # edited in the list without its hash, and re-levelled
    entries["AHP-WIDGET-002"].update(text="A widget is rarely square.", level="SHOULD NOT")
    # removed from the list, and a new one
    del entries["AHP-GADGET-001"]
    entries["AHP-GIZMO-001"] = {**entries["AHP-WIDGET-001"], "id": "AHP-GIZMO-001"}
    listed["requirements"] = list(entries.values())
    _write(path, listed)
    code, lines = _run(spec, pinned, capsys)
    assert code == 1
    findings = lines[:-1]
    named = [line.split(":")[0] for line in findings]
    assert named == sorted(named)
    assert any(
        line.startswith("AHP-GADGET-001: removed from spec/draft/requirements.json")
        for line in findings
    )
    assert any(
        line.startswith("AHP-GIZMO-001: new in spec/draft/requirements.json") for line in findings
    )
    assert any(
        line.startswith("AHP-WIDGET-001: drifted: spec/draft/requirements.json has textSha256")
        for line in findings
    )
    widget2 = [line for line in findings if line.startswith("AHP-WIDGET-002")]
    assert any("does not hash to its own textSha256" in line for line in widget2)
    assert any("level is 'SHOULD NOT'" in line for line in widget2)
    # the document still holds the pinned sentences: no finding from it
    assert not any(": edited:" in line for line in findings)


def test_a_drifted_profile_or_a_folder_that_is_no_spec_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec_folder(tmp_path / "spec")
    pinned = _pinned_table(tmp_path / "pinned.json")
    manifest = {"profiles": [{**_profile(), "roles": ["harness"]}, {**_profile(), "id": "x"}]}
    _write(spec / "conformance/draft/manifest.json", manifest)
    code, lines = _run(spec, pinned, capsys)
    assert code == 1
    assert lines[:-1] == [
        "profile base: drifted: roles is ['harness'] in conformance/draft/manifest.json, "
        f"pinned ['harness', 'backend']: re-pin it in {pinned}",
        f"profile x: new in conformance/draft/manifest.json: pin it in {pinned}",
    ]
    assert main(["requirements", "--spec", str(tmp_path / "nothing")]) == 2
    assert "not a spec checkout" in capsys.readouterr().err
