"""`python -m interop requirements --spec PATH`: the pinned requirement table
(requirements.json beside this module) against a checkout of the spec repository.

PATH holds `spec/draft/requirements.json` and the documents it names. A finding is
one line naming the id, the file and what to do:

- drifted: the spec's `textSha256` differs from ours, or its `text` does not hash
  to its own `textSha256`, or a pinned fact (level, profile, document, anchor,
  section) differs;
- new: in the spec, not pinned; removed: pinned, not in the spec;
- edited: the requirement's document exists under PATH but its requirement line
  (`**<id> — <level>.** <text>`, what `textSha256` hashes) no longer hashes to the
  pinned value, is missing or is there more than once; or its anchor or section
  heading is gone. This catches a sentence edited in a document even when the
  spec's requirements.json was not regenerated.

When PATH also holds `conformance/draft/manifest.json`, each pinned profile is
compared with it (requirement ids, roles, profile document hash). Our own `IMX-`
requirements are not the spec's and are not compared. Exit 0 when nothing is
found, 1 otherwise; 2 when PATH is not a spec checkout.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from interop.coverage import CANONICAL_ID, REQUIREMENTS_FILE, load_profiles, load_requirements

SPEC_REQUIREMENTS = "spec/draft/requirements.json"
SPEC_PROFILES = "conformance/draft/manifest.json"
FACTS = ("level", "profile", "document", "anchor", "section")


def requirement_line(rid: str, level: str, text: str) -> str:
    """The line a requirement's document prints, and what its textSha256 hashes."""
    return f"**{rid} \u2014 {level}.** {text}"


def sha256_text(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _pinned_name(pinned: Path) -> str:
    try:
        return str(pinned.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(pinned)


def check_spec(spec: Path, pinned: Path = REQUIREMENTS_FILE) -> list[str]:
    """Every finding, one line each, sorted by id (then profiles). ValueError when
    `spec` has no readable spec/draft/requirements.json."""
    source = spec / SPEC_REQUIREMENTS
    try:
        listed = json.loads(source.read_text(encoding="utf-8"))["requirements"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{spec}: not a spec checkout ({SPEC_REQUIREMENTS}: {exc})") from None
    ours = _pinned_name(pinned)
    table = {e["id"]: e for e in load_requirements(pinned) if CANONICAL_ID.fullmatch(e["id"])}
    theirs = {str(e.get("id")): e for e in listed if isinstance(e, dict)}
    findings: list[tuple[str, str]] = []
    for rid in sorted(set(theirs) - set(table)):
        entry = theirs[rid]
        findings.append(
            (
                rid,
                f"{rid}: new in {SPEC_REQUIREMENTS} ({entry.get('level')}, profile "
                f"{entry.get('profile')}, {entry.get('document')}): pin it in {ours} with "
                "its facts, a title in our words and its features ([] if no row tests it)",
            )
        )
    for rid in sorted(set(table) - set(theirs)):
        findings.append(
            (
                rid,
                f"{rid}: removed from {SPEC_REQUIREMENTS} but pinned in {ours}: drop it, or "
                "keep what our rows test as an IMX- requirement that refines the rule now "
                "stating it",
            )
        )
    for rid in sorted(set(table) & set(theirs)):
        findings += [(rid, f) for f in _entry_findings(spec, table[rid], theirs[rid], ours)]
    for rid, line in _profile_findings(spec, load_profiles(pinned), ours):
        findings.append((rid, line))
    return [line for _, line in sorted(findings, key=lambda f: f[0])]


def _entry_findings(
    spec: Path, pinned: dict[str, Any], entry: dict[str, Any], ours: str
) -> list[str]:
    rid = pinned["id"]
    where = f"{pinned['document']}#{pinned['anchor']}"
    found: list[str] = []
    if entry.get("textSha256") != pinned["textSha256"]:
        found.append(
            f"{rid}: drifted: {SPEC_REQUIREMENTS} has textSha256 {entry.get('textSha256')}, "
            f"pinned {pinned['textSha256']}: re-read {where}, then re-pin it in {ours} "
            "(textSha256; check its title and features still fit the new sentence)"
        )
    text = entry.get("text")
    if not isinstance(text, str):
        found.append(f"{rid}: {SPEC_REQUIREMENTS} gives no text: the spec's list is malformed")
    elif sha256_text(requirement_line(rid, str(entry.get("level")), text)) != entry.get(
        "textSha256"
    ):
        found.append(
            f"{rid}: drifted: in {SPEC_REQUIREMENTS} its text does not hash to its own "
            f"textSha256: the spec's list is inconsistent; report it upstream and pin "
            "nothing from it until it is fixed"
        )
    for fact in FACTS:
        if entry.get(fact) != pinned[fact]:
            found.append(
                f"{rid}: drifted: {fact} is {entry.get(fact)!r} in {SPEC_REQUIREMENTS}, "
                f"pinned {pinned[fact]!r}: re-pin it in {ours}"
            )
    found += _document_findings(spec, pinned, ours)
    return found


def _document_findings(spec: Path, pinned: dict[str, Any], ours: str) -> list[str]:
    """The pinned requirement's line, anchor and section in its document under `spec`
    (nothing when the document is absent: the list's own checks still run)."""
    rid, name = pinned["id"], pinned["document"]
    try:
        text = (spec / name).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return []
    found: list[str] = []
    start = re.compile(rf"\*\*{re.escape(rid)} \u2014 [A-Z ]+\.\*\* ")
    lines = [m for line in text.splitlines() if (m := start.search(line))]
    candidates = [m.string[m.start() :].rstrip() for m in lines]
    if not candidates:
        found.append(
            f"{rid}: edited: {name} has no requirement line for it "
            f"('**{rid} \u2014 {pinned['level']}.** ...'): find where the rule went and "
            f"re-pin it in {ours}"
        )
    elif len(candidates) > 1:
        found.append(
            f"{rid}: edited: {name} has {len(candidates)} requirement lines for it: "
            "the document is inconsistent; report it upstream"
        )
    elif sha256_text(candidates[0]) != pinned["textSha256"]:
        found.append(
            f"{rid}: edited: the sentence in {name} hashes to {sha256_text(candidates[0])}, "
            f"pinned {pinned['textSha256']}: re-read it, then re-pin it in {ours} "
            "(textSha256; check its title and features still fit)"
        )
    if text.count(f'<a id="{pinned["anchor"]}"></a>') != 1:
        found.append(
            f"{rid}: edited: {name} no longer has exactly one anchor {pinned['anchor']!r}: "
            f"re-pin its anchor in {ours}"
        )
    heading = re.compile(rf"^#{{1,6}} {re.escape(pinned['section'])}$", re.MULTILINE)
    if not heading.search(text):
        found.append(
            f"{rid}: edited: {name} has no section heading {pinned['section']!r}: "
            f"re-pin its section in {ours}"
        )
    return found


def _profile_findings(
    spec: Path, profiles: list[dict[str, Any]], ours: str
) -> list[tuple[str, str]]:
    path = spec / SPEC_PROFILES
    if not path.is_file():
        return []
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))["profiles"]
    except (ValueError, KeyError, TypeError) as exc:
        return [("~", f"{SPEC_PROFILES}: unreadable ({exc}): the spec checkout is broken")]
    theirs = {str(p.get("id")): p for p in listed if isinstance(p, dict)}
    pinned = {str(p["id"]): p for p in profiles}
    found: list[tuple[str, str]] = []
    for pid in sorted(set(theirs) - set(pinned)):
        found.append((f"~{pid}", f"profile {pid}: new in {SPEC_PROFILES}: pin it in {ours}"))
    for pid in sorted(set(pinned) - set(theirs)):
        found.append(
            (f"~{pid}", f"profile {pid}: removed from {SPEC_PROFILES}: drop it from {ours}")
        )
    for pid in sorted(set(pinned) & set(theirs)):
        for key in ("requirements", "roles", "path", "sha256"):
            if theirs[pid].get(key) != pinned[pid][key]:
                found.append(
                    (
                        f"~{pid}",
                        f"profile {pid}: drifted: {key} is {theirs[pid].get(key)!r} in "
                        f"{SPEC_PROFILES}, pinned {pinned[pid][key]!r}: re-pin it in {ours}",
                    )
                )
    return found


def requirements_command(spec: Path, pinned: Path = REQUIREMENTS_FILE) -> int:
    """Print every finding; 0 when the table matches the spec, 1 otherwise, 2 when
    `spec` is not a spec checkout."""
    try:
        findings = check_spec(spec, pinned)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in findings:
        print(line)
    count = len(load_requirements(pinned))
    verdict = "matches" if not findings else f"{len(findings)} finding(s) against"
    print(f"requirements: {_pinned_name(pinned)} ({count} pinned) {verdict} {spec}")
    return 1 if findings else 0
