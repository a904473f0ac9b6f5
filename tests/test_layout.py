"""The harness's shape rules that imports cannot express: no function over 80 lines
(docs/ARCHITECTURE.md, "Rules of the layers")."""

from __future__ import annotations

import ast

from interop import ROOT

LIMIT = 80


def test_no_harness_function_is_longer_than_the_limit() -> None:
    long: list[str] = []
    for path in sorted((ROOT / "interop").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LIMIT:
                    where = path.relative_to(ROOT)
                    long.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, "split these into functions that each do one thing: " + "; ".join(long)
