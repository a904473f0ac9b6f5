"""The emulated host's own tool contracts: its userland, not the protocol.

A host publishes a tool input only if its tool accepts it. This host has one
tool with a contract, `task`, whose `task` field is a positive integer (a
boolean is not a number). An input a hook rewrote into something the tool
refuses makes the host reject the whole response.
"""

from __future__ import annotations

from typing import Any


def input_problem(tool_name: Any, value: dict[str, Any]) -> str | None:
    if tool_name == "task":
        task = value.get("task")
        if isinstance(task, bool) or not isinstance(task, int) or task < 1:
            return f"tool 'task' needs a positive integer 'task', got {task!r}"
    return None
