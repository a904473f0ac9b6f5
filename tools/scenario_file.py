"""Writing or checking a generated scenario file, byte for byte (the suites' generators share it).

`write_or_check` is the whole of a generator's `--output` / `--check` work:
write the rendered text, or exit 1 naming the first difference with the file
on disk and the command that regenerates it.
"""

from __future__ import annotations

import json
from pathlib import Path


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
    for number, (want_id, have_id) in enumerate(zip(wanted_ids, have_ids, strict=False)):
        if want_id != have_id:
            return f"scenario {number} is {have_id!r}, the generator makes {want_id!r}"
    if len(have_ids) < len(wanted_ids):
        first = wanted_ids[len(have_ids)]
        return f"lacks {len(wanted_ids) - len(have_ids)} scenario(s), first {first!r}"
    if len(have_ids) > len(wanted_ids):
        first = have_ids[len(wanted_ids)]
        return f"has {len(have_ids) - len(wanted_ids)} extra scenario(s), first {first!r}"
    for want_row, have_row in zip(wanted, have, strict=True):
        if json.dumps(want_row) != json.dumps(have_row):
            return f"scenario {want_row['id']!r} differs"
    if on_disk != json.loads(expected):
        return "top-level fields differ"
    for number, (want_line, have_line) in enumerate(
        zip(expected.splitlines(), actual.splitlines(), strict=False), start=1
    ):
        if want_line != have_line:
            return f"formatting differs at line {number}"
    return "formatting differs (line endings or trailing text)"


def write_or_check(output: Path, text: str, count: int, *, check: bool, script: str) -> int:
    """Write `text` (`count` scenarios) to `output`, or with `check` verify it is there as is."""
    if check:
        if not output.is_file():
            print(f"{output}: missing; run python3 tools/{script}")
            return 1
        actual = output.read_bytes().decode("utf-8", errors="replace")
        if actual != text:
            print(f"{output}: {describe_difference(text, actual)}; run python3 tools/{script}")
            return 1
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8", newline="\n")
    print(f"wrote {output} ({count} scenarios)")
    return 0
