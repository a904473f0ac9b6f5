"""JUnit XML: a test suite per combination, a test case per row, valid for Jenkins' schema.

Each `<testsuite>` carries `tests`, `failures`, `errors` and `skipped` equal to
its test cases: a combination-level error is one `<testcase>` with an
`<error>`; a failed row has a `<failure>` whose message and text give the
path, the expected and the actual value; unsupported, inapplicable and
not-run rows are `<skipped>`, and so is a known-failing row (listed in
known-failures.json, `interop/known.py`), with its reason and issue, and a
known-failing combination's errors. A row's test case is named by its path,
`suite/set/client->server/transport/auth/id`, unique in the whole file: the one
order known-failures.json, `diff`, `--rows` and the repro bundles use
(`interop/known.py` `row_path`), so a name copied from a CI page is a pattern.
The root `<testsuites>` carries `tests`, `failures` and `errors` only (Jenkins'
schema has no `skipped` there).
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET

from interop.jsonvalue import dumps_compact
from interop.results import rows_of

SKIPPED = ("unsupported", "inapplicable", "not-run")
KNOWN = "known-failing"


def _known_message(row: dict[str, Any]) -> str:
    known = row.get("known") or {}
    reason = known.get("reason") or "listed in known-failures.json"
    issue = f" ({known['issue']})" if known.get("issue") else ""
    return f"known failure: {reason}{issue}"


def _suite_name(combination: dict[str, Any]) -> str:
    return (
        f"{combination['suite']}.{combination['client']}->{combination['server']}."
        f"{combination['transport']}.{combination['auth']}"
    )


def build_junit(document: dict[str, Any]) -> bytes:
    from interop.known import row_path  # known reads reports: imported once both exist

    root = ET.Element("testsuites", name="ahp-interop")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for combination in document["combinations"]:
        name = _suite_name(combination)
        suite = ET.SubElement(root, "testsuite", name=name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if combination["status"] in ("inapplicable", "not-run"):
            case = ET.SubElement(suite, "testcase", name="(combination)", classname=name)
            ET.SubElement(case, "skipped", message=combination.get("reason", combination["status"]))
            counts["tests"] += 1
            counts["skipped"] += 1
        for number, error in enumerate(combination["errors"], start=1):
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"(combination) {number}: {error['stage']}",
                classname=name,
            )
            text = f"{error['class']} at {error['stage']}: {error['message']}"
            counts["tests"] += 1
            if combination["status"] == KNOWN:  # every row is a known failure
                ET.SubElement(case, "skipped", message=f"known failure: {text}")
                counts["skipped"] += 1
                continue
            element = ET.SubElement(case, "error", type=error["class"], message=error["message"])
            element.text = text
            counts["errors"] += 1
        for row in rows_of(document, combination):
            case = ET.SubElement(
                suite,
                "testcase",
                name=row_path(combination, row["set"], row["id"]),
                classname=name,
            )
            counts["tests"] += 1
            if row["status"] == "failed":
                message = row.get("error") or "failed"
                failure = ET.SubElement(case, "failure", type="RowFailed", message=message)
                failure.text = (
                    f"{message}\nexpected: {dumps_compact(row.get('expected'))}\n"
                    f"actual:   {dumps_compact(row.get('actual'))}"
                )
                counts["failures"] += 1
            elif row["status"] == "flaky":  # never a pass: a failure CI must see
                message = row.get("error") or "flaky"
                failure = ET.SubElement(case, "failure", type="RowFlaky", message=message)
                failure.text = message
                counts["failures"] += 1
            elif row["status"] == KNOWN:
                skipped = ET.SubElement(case, "skipped", message=_known_message(row))
                skipped.text = row.get("error") or ""
                counts["skipped"] += 1
            elif row["status"] in SKIPPED:
                ET.SubElement(case, "skipped", message=row.get("error") or row["status"])
                counts["skipped"] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key in ("tests", "failures", "errors"):
        root.set(key, str(totals[key]))
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
