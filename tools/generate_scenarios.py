#!/usr/bin/env python3
"""Generate the project's core scenario set, scenarios/core.json.

    python3 tools/generate_scenarios.py            write the file
    python3 tools/generate_scenarios.py --check    exit 1 unless the file is reproduced exactly
    python3 tools/generate_scenarios.py --summary  print the group table for docs/scenarios.md
    ... --output PATH                              use PATH instead of scenarios/core.json

The rows live in the scenario_*.py modules beside this file; see
"The core scenario set" in docs/scenarios.md for how to add one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
if str(TOOLS_DIR) not in sys.path:
    sys.path.insert(0, str(TOOLS_DIR))

import scenario_envelope  # noqa: E402
import scenario_interaction_boundaries as interaction  # noqa: E402
import scenario_message_boundaries as messages  # noqa: E402
import scenario_tool_before as tool_before  # noqa: E402
from scenario_lint import lint  # noqa: E402
from scenario_model import Group  # noqa: E402

DEFAULT_OUTPUT = TOOLS_DIR.parent / "scenarios" / "core.json"
FORMAT_VERSION = 1


def groups() -> list[Group]:
    """Every group, in file order."""
    return [
        tool_before.decisions(),
        tool_before.returns(),
        tool_before.modifications(),
        tool_before.candidates(),
        tool_before.permissions(),
        tool_before.flows(),
        tool_before.injections(),
        tool_before.host_rule(),
        tool_before.capability_negatives(),
        scenario_envelope.envelope_negatives(),
        scenario_envelope.effect_schema_negatives(),
        scenario_envelope.correlation_negatives(),
        messages.tool_after(),
        messages.turn_finish(),
        messages.model_request(),
        messages.compact_before(),
        messages.compact_after(),
        interaction.outbound_message(),
        interaction.elicitation_result(),
        interaction.workspace_change(),
    ]


def build() -> list[dict[str, Any]]:
    scenarios = [row for group in groups() for row in group.scenarios]
    problems = lint(scenarios)
    if problems:
        raise SystemExit("scenario set is malformed:\n  " + "\n  ".join(problems))
    return scenarios


def render(scenarios: list[dict[str, Any]]) -> str:
    document = {"version": FORMAT_VERSION, "scenarios": scenarios}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def summary_table() -> str:
    """The markdown table of groups documented in docs/scenarios.md."""
    lines = [
        "| group tag | boundary | positive | negative | what the rows prove |",
        "|---|---|---|---|---|",
    ]
    for group in groups():
        negative = sum(1 for row in group.scenarios if "expectError" in row)
        positive = len(group.scenarios) - negative
        lines.append(
            f"| `{group.tag}` | `{group.boundary}` | {positive} | {negative} | {group.proves} |"
        )
    total = sum(len(group.scenarios) for group in groups())
    lines.append(f"| | **total** | | | **{total} scenarios** |")
    return "\n".join(lines) + "\n"


def describe_difference(expected: str, actual: str) -> str:
    """One line naming the first difference between generated and on-disk text."""
    try:
        on_disk = json.loads(actual)
    except json.JSONDecodeError as error:
        return f"not valid JSON ({error.msg} at line {error.lineno})"
    wanted = json.loads(expected)["scenarios"]
    have = on_disk.get("scenarios") if isinstance(on_disk, dict) else None
    if not isinstance(have, list):
        return "has no scenarios array"
    wanted_ids = [row["id"] for row in wanted]
    have_ids = [row.get("id") if isinstance(row, dict) else None for row in have]
    missing = [sid for sid in wanted_ids if sid not in have_ids]
    if missing:
        return f"lacks {len(missing)} scenario(s), first {missing[0]!r}"
    extra = [sid for sid in have_ids if sid not in wanted_ids]
    if extra:
        return f"has {len(extra)} unexpected scenario(s), first {extra[0]!r}"
    if have_ids != wanted_ids:
        return "lists the scenarios in another order"
    for want_row, have_row in zip(wanted, have, strict=True):
        if want_row != have_row:
            return f"scenario {want_row['id']!r} differs"
    if on_disk != json.loads(expected):
        return "top-level fields differ"
    for number, (want_line, have_line) in enumerate(
        zip(expected.splitlines(), actual.splitlines(), strict=False), start=1
    ):
        if want_line != have_line:
            return f"formatting differs at line {number}"
    return "formatting differs (line endings or trailing text)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--output", type=Path, default=DEFAULT_OUTPUT, help="scenario file to write or check"
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="verify the file instead of writing it")
    mode.add_argument("--summary", action="store_true", help="print the group table and exit")
    args = parser.parse_args(argv)

    if args.summary:
        sys.stdout.write(summary_table())
        return 0
    scenarios = build()
    text = render(scenarios)
    output: Path = args.output
    if args.check:
        if not output.is_file():
            print(f"{output}: missing; run python3 tools/generate_scenarios.py")
            return 1
        actual = output.read_bytes().decode("utf-8", errors="replace")
        if actual != text:
            difference = describe_difference(text, actual)
            print(f"{output}: {difference}; run python3 tools/generate_scenarios.py")
            return 1
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {output} ({len(scenarios)} scenarios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
