"""The compaction suite end to end: the real client against the real server
(HTTP with auth none, and stdio), on runs and negatives written here by hand
from docs/COMPACTION.md; the report and the server's receipts are checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from compaction_kit import (
    before_request,
    client_config,
    http_server,
    reply,
    run_client,
    run_row,
    scenario_file,
    sub,
    text,
)
from lifecycle_kit import request_json

AFTER_CAPS = {"effects": ["modify"], "modify": {"summary": {"replace": True, "merge": False}}}


def generated_summary(rid: str, value: str) -> list[dict[str, Any]]:
    return [text(f"{rid}:summary", value)]


SUPPLIED = [text("sup:part", "A summary the subscription wrote.")]
EDITED = [text("edit:part", "An edited summary.")]


def rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = [
        run_row(
            "py-cmp-gen",
            [sub("gate"), sub("watch", "observe")],
            [sub("audit", "observe")],
            [reply("py-cmp-gen:before")],
            [],
            instructions=[text("i1", "Keep names."), text("i2", "Be brief.")],
        ),
        run_row(
            "py-cmp-sup",
            [sub("supplier"), sub("late")],
            [sub("editor")],
            [
                reply("py-cmp-sup:before", {"type": "return", "value": SUPPLIED}),
                reply("py-cmp-sup:before"),
            ],
            [reply("py-cmp-sup:after")],
        ),
        run_row(
            "py-cmp-deny",
            [sub("judge"), sub("skipped"), sub("watch", "observe")],
            [sub("audit", "observe")],
            [reply("py-cmp-deny:before", {"type": "deny", "reason": "no compaction"})],
            [],
        ),
        run_row(
            "py-cmp-mod",
            [],
            [sub("editor")],
            [],
            [
                reply(
                    "py-cmp-mod:after",
                    {
                        "type": "modify",
                        "target": "summary",
                        "operation": "replace",
                        "value": EDITED,
                    },
                )
            ],
            items=3,
        ),
        run_row(
            "py-cmp-fault",
            [],
            [sub("broken", failurePolicy="fail-closed"), sub("never")],
            [],
            [{"fault": "server-error"}],
            items=1,
        ),
        run_row(
            "py-cmp-closed",
            [sub("broken", failurePolicy="fail-closed"), sub("never")],
            [sub("audit", "observe")],
            [{"fault": "malformed"}],
            [],
        ),
        {
            "id": "py-cmp-neg-invalid",
            "negative": {
                k: v for k, v in before_request("py-cmp-neg-invalid").items() if k != "params"
            }
            | {"params": {"protocolVersion": "draft"}},
        },
        {"id": "py-cmp-neg-unknown", "negative": before_request("nobody")},
        {
            "id": "py-cmp-neg-body",
            # A boundary id no call uses (the denied run has no after boundary).
            "negative": before_request(
                "py-cmp-deny",
                instructions=[
                    {
                        "id": "b",
                        "kind": "text",
                        "mediaType": "text/plain",
                        "selection": "metadata",
                        "body": {"ref": "urn:uuid:1", "size": 1, "sha256": "0" * 64},
                    }
                ],
            ),
        },
    ]
    body = rows[-1]["negative"]
    body["id"] = body["params"]["event"]["id"] = "py-cmp-deny:after"
    return rows


def expected() -> dict[str, Any]:
    nothing = {"called": [], "failures": [], "observations": []}
    gen_summary = generated_summary(
        "py-cmp-gen", "Summary of 2 items. Instructions: Keep names. Be brief."
    )
    return {
        "py-cmp-gen": {
            "applied": True,
            "instructions": [text("i1", "Keep names."), text("i2", "Be brief.")],
            "summary": gen_summary,
            "execution": {"status": "executed"},
            "provenance": {"kind": "generated"},
            "before": {"called": ["gate"], "failures": [], "observations": ["watch"]},
            "after": {"called": [], "failures": [], "observations": ["audit"]},
        },
        "py-cmp-sup": {
            "applied": True,
            "instructions": [],
            "summary": SUPPLIED,
            "execution": {"status": "skipped", "reason": "supplied_result"},
            "provenance": {"kind": "supplied", "supplier": "supplier"},
            "before": {"called": ["supplier", "late"], "failures": [], "observations": []},
            "after": {"called": ["editor"], "failures": [], "observations": []},
        },
        "py-cmp-deny": {
            "applied": False,
            "instructions": [],
            "summary": None,
            "execution": None,
            "provenance": None,
            "before": {"called": ["judge"], "failures": [], "observations": ["skipped", "watch"]},
            "after": nothing,
        },
        "py-cmp-mod": {
            "applied": True,
            "instructions": [],
            "summary": EDITED,
            "execution": {"status": "executed"},
            "provenance": {"kind": "generated"},
            "before": nothing,
            "after": {"called": ["editor"], "failures": [], "observations": []},
        },
        "py-cmp-fault": {  # a fail-closed after failure prevents the application
            "applied": False,
            "instructions": [],
            "summary": None,
            "execution": None,
            "provenance": None,
            "before": nothing,
            "after": {"called": ["broken"], "failures": ["broken"], "observations": ["never"]},
        },
        "py-cmp-closed": {
            "applied": False,
            "instructions": [],
            "summary": None,
            "execution": None,
            "provenance": None,
            "before": {"called": ["broken"], "failures": ["broken"], "observations": ["never"]},
            "after": nothing,
        },
        "py-cmp-neg-invalid": {"error": -32602},
        "py-cmp-neg-unknown": {"error": -32602},
        "py-cmp-neg-body": {"error": -32602},
    }


def check(report: dict[str, Any]) -> None:
    assert report["language"] == "python"
    results = {row["id"]: row for row in report["results"]}
    wanted = expected()
    assert list(results) == list(wanted)
    for rid, actual in wanted.items():
        assert results[rid]["status"] == "completed", results[rid]
        assert results[rid]["actual"] == actual, rid
    entries = report["receipts"]["entries"]

    def kinds(ident: str) -> list[str]:
        return [e["kind"] for e in entries if e.get("id") == ident]

    def position(kind: str, ident: str) -> int:
        return next(n for n, e in enumerate(entries) if e["kind"] == kind and e.get("id") == ident)

    # Serial calls, each replied before the next, settled after the last reply.
    assert kinds("py-cmp-gen:before") == ["received", "replied", "chain-settled"]
    assert kinds("py-cmp-sup:before") == ["received", "replied"] * 2 + ["chain-settled"]
    assert kinds("py-cmp-sup:after") == ["received", "replied", "chain-settled"]
    assert kinds("py-cmp-deny:before") == ["received", "replied", "chain-settled"]
    assert kinds("py-cmp-deny:after") == []
    assert kinds("py-cmp-mod:before") == ["chain-settled"]
    assert kinds("py-cmp-fault:after") == ["received", "replied", "chain-settled"]
    assert kinds("py-cmp-closed:before") == ["received", "replied", "chain-settled"]
    assert kinds("py-cmp-closed:after") == []
    # The second call carried the first one's state (the bound candidate).
    second = [e for e in entries if e["kind"] == "received" and e["id"] == "py-cmp-sup:before"][1]
    assert second["message"]["params"]["state"] == {
        "permission": "none",
        "candidate": {"value": SUPPLIED},
    }
    # The derived after request, as received.
    after = next(e for e in entries if e["kind"] == "received" and e["id"] == "py-cmp-mod:after")
    before = before_request("py-cmp-mod", items=3)["params"]["event"]
    assert after["message"] == {
        "jsonrpc": "2.0",
        "id": "py-cmp-mod:after",
        "method": "hooks/intercept",
        "params": {
            "protocolVersion": "draft",
            "event": {
                "id": "py-cmp-mod:after",
                "source": before["source"],
                "time": before["time"],
                "type": "context.compact.after",
                "parentEventId": "py-cmp-mod:before",
                "summary": generated_summary("py-cmp-mod", "Summary of 3 items."),
                "removed": [{"id": item["id"]} for item in before["items"]],
                "execution": {"status": "executed"},
            },
            "capabilities": AFTER_CAPS,
        },
    }
    # The unmodified before request went out as it was (no instructions added).
    first = next(e for e in entries if e["kind"] == "received" and e["id"] == "py-cmp-deny:before")
    assert first["message"] == before_request("py-cmp-deny")
    # Observations: after settlement, with the settled event.
    observed = [(e["eventId"], e["event"]) for e in entries if e["kind"] == "observed"]
    assert [ident for ident, _ in observed] == [
        "py-cmp-gen:before",
        "py-cmp-gen:after",
        "py-cmp-deny:before",
        "py-cmp-deny:before",
        "py-cmp-fault:after",
        "py-cmp-closed:before",
    ]
    for ident, _ in observed:
        assert position("chain-settled", ident) < next(
            n for n, e in enumerate(entries) if e["kind"] == "observed" and e["eventId"] == ident
        )
    fault_note = next(event for ident, event in observed if ident == "py-cmp-fault:after")
    assert fault_note["summary"] == generated_summary("py-cmp-fault", "Summary of 1 items.")
    # Negatives: nothing recorded.
    for ident in ("py-cmp-neg-invalid:before", "nobody:before"):
        assert kinds(ident) == []
    assert kinds("py-cmp-deny:after") == []  # the body negative's id


def test_get_capabilities_is_the_bare_tool_before_capabilities_unrecorded(
    tmp_path: Path,
) -> None:
    """The compaction server's ``GET /capabilities``: exactly the ``capabilities`` of
    the tool.before entry of the manifest it answers ``hooks/capabilities`` with,
    no receipt."""
    with http_server(tmp_path, scenario_file(tmp_path, rows())) as ready:
        port = int(ready["endpoint"].rsplit(":", 1)[1].split("/")[0])
        status, got, _ = request_json(port, "GET", "/capabilities", None)
        ask = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "hooks/capabilities",
            "params": {"protocolVersion": "draft"},
        }
        manifest = request_json(port, "POST", "/intercept", ask)[1]["result"]["manifest"]
        [entry] = [e for e in manifest["events"] if e["event"] == "tool.before"]
        assert status == 200 and got == entry["capabilities"] and "intercept" in entry["modes"]
        control = int(ready["controlEndpoint"].rsplit(":", 1)[1].split("/")[0])
        assert request_json(control, "GET", "/receipts")[1] == {"entries": []}


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_client_against_server(tmp_path: Path, transport: str) -> None:
    scenarios = scenario_file(tmp_path, rows())
    if transport == "http":
        with http_server(tmp_path, scenarios) as ready:
            report, _ = run_client(client_config(tmp_path, scenarios, "http", ready))
    else:
        report, _ = run_client(client_config(tmp_path, scenarios, "stdio"))
    check(report)
