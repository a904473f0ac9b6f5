"""JUnit XML: one test suite per combination, one test case per scenario row."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET


def build_junit(document: dict[str, Any]) -> bytes:
    root = ET.Element("testsuites", name="ahp-interop")
    for combination in document["combinations"]:
        name = (
            f"{combination['suite']}.{combination['client']}->{combination['server']}."
            f"{combination['transport']}.{combination['auth']}"
        )
        rows = combination["results"]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=name,
            tests=str(len(rows)),
            failures=str(sum(r["status"] == "failed" for r in rows)),
            skipped=str(sum(r["status"] in ("unsupported", "inapplicable") for r in rows)),
        )
        if combination["status"] == "inapplicable":
            case = ET.SubElement(suite, "testcase", name="(combination)", classname=name)
            ET.SubElement(case, "skipped", message="inapplicable")
        for error in combination["errors"]:
            case = ET.SubElement(
                suite, "testcase", name=f"(combination) {error['stage']}", classname=name
            )
            ET.SubElement(case, "error", type=error["class"], message=error["message"])
        for row in rows:
            case = ET.SubElement(
                suite, "testcase", name=f"{row['set']}/{row['id']}", classname=name
            )
            if row["status"] == "failed":
                ET.SubElement(case, "failure", message=row.get("error") or "failed")
            elif row["status"] in ("unsupported", "inapplicable"):
                ET.SubElement(case, "skipped", message=row["status"])
    ET.indent(root)
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"
