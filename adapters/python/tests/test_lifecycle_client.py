"""The lifecycle client as a real process against our lifecycle server, over
HTTP and stdio (docs/LIFECYCLE.md, "Client: the steps" and "Chains").

Every row is hand-built here and every assertion is a literal outcome of its
steps (never a scenario file's expectation). Reports, configs and receipt
entries are checked against ``schemas/contract/lifecycle-*.schema.json``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from builders import modify, response
from conftest import ADAPTER_DIR
from lifecycle_kit import (
    ORIGINAL,
    ahp_command,
    attachment,
    chain_row,
    client_env,
    http_server_process,
    lc_request,
    row,
    run_lifecycle_client,
    settled,
    sub,
    upload_step,
    write,
)

pytestmark = pytest.mark.e2e

BLOB = b"\x00\xffblob bytes"
SOURCE = b"source bytes"
SOURCE_SHA = hashlib.sha256(SOURCE).hexdigest()


def step(op: str, **fields: Any) -> dict[str, Any]:
    return {"op": op, **fields}


def exchange(key: str, slot: str | None = None) -> list[dict[str, Any]]:
    """send, wait, release, receive, accept: one reply taken and published."""
    return [
        step("send", key=key, slot=slot or key),
        step("wait", key=key, count=1),
        step("release", key=key),
        step("receive", slot=slot or key),
        step("accept", key=key),
    ]


BASIC = lc_request("basic:a", items=[attachment("blob-alias")])
CANCEL = lc_request("cancel:a")
LATE = lc_request("late:a")
FAIL_OPEN = lc_request("open:a")
REJECT = lc_request("reject:a")
EMIT = lc_request("emit:a")
SOURCED = lc_request("sourced:a", items=[attachment("source-alias")])
STEP_ROWS = [
    row(
        "basic",
        {"a": BASIC},
        {"a": settled(BASIC, {"v": "settled"})},
        upload_step("blob-alias", BLOB),
        *exchange("a"),
        step("send", key="a", slot="dup", bypassSDK=True),
        step("wait", key="a", count=2),
        step("receive", slot="dup"),
        step("accept", key="a"),
        step("observe", key="a", subscription="metadata"),
        step("observe", key="a", subscription="body", items=[attachment("blob-alias", "other")]),
    ),
    row(
        "cancel",
        {"a": CANCEL},
        {"a": settled(CANCEL, {"v": "never"})},
        step("send", key="a", slot="a"),
        step("wait", key="a", count=1),
        step("cancel", key="a"),
        step("failOpen", key="a"),
        step("observe", key="a", subscription="metadata"),
        step("release", key="a"),
        step("receive", slot="a"),
        step("accept", key="a"),
    ),
    row(
        "late",
        {"a": LATE},
        {"a": settled(LATE, {"v": "taken"})},
        step("send", key="a", slot="a"),
        step("wait", key="a", count=1),
        step("release", key="a"),
        step("receive", slot="a"),
        step("cancel", key="a"),
        step("accept", key="a"),
    ),
    row(
        "open",
        {"a": FAIL_OPEN},
        {"a": settled(FAIL_OPEN, {"v": "unused"})},
        step("failOpen", key="a"),
        step("accept", key="a"),
        step("cancel", key="a"),
        step("observe", key="a", subscription="metadata"),
    ),
    row(
        "reject",
        {"a": REJECT},
        {"a": response(REJECT, {"type": "message", "text": "m"}, {"type": "return", "value": 1})},
        *exchange("a"),
    ),
    row(
        "uploads",
        {},
        {},
        upload_step("short", b"body", size=99),
        upload_step("hash", b"body", sha256="0" * 64),
        upload_step(
            "stranger",
            b"body",
            upload={
                "auth": {"type": "bearer", "tokenEnv": "AHP_INTEROP_UNAUTHORIZED_UPLOAD_TOKEN"},
                "timeoutMs": 5000,
                "maxBytes": 1048576,
            },
        ),
        upload_step("empty", b""),
    ),
    row(
        "sourced",
        {"a": SOURCED},
        {"a": settled(SOURCED, {"v": "sourced"})},
        *exchange("a"),
    ),
    row("unknown-op", {}, {}, step("dance", key="a")),
    row(
        "emit",
        {"a": EMIT},
        {"a": settled(EMIT, {"v": "live"})},
        step("send", key="a", slot="a"),
        step("wait", key="a", count=1),
        step("emit", response={**settled(EMIT, {"v": "stale"}), "id": "ghost"}),
        step("release", key="a"),
        step("receive", slot="a"),
        step("accept", key="a"),
        transports=["stdio"],
    ),
]


def chain_subs(sid: str, policy: str = "fail-open") -> list[dict[str, Any]]:
    return [
        sub(sid, "x", policy=policy),
        sub(sid, "y", policy=policy, content="omit"),
        sub(sid, "z", policy=policy),
        sub(sid, "audit", mode="observe"),
    ]


CHAIN_ROWS = [
    chain_row(
        "carry",
        chain_subs("carry"),
        [
            [modify("input", "replace", {"v": 1}), {"type": "allow"}],
            [{"type": "ask"}],
            [{"type": "deny", "reason": "no"}],
        ],
    ),
    chain_row(
        "closed",
        chain_subs("closed", policy="fail-closed"),
        [
            [modify("input", "replace", {"v": 1}), {"type": "return", "value": 1}],
            [{"type": "allow"}],
        ],
    ),
    chain_row(
        "opened",
        chain_subs("opened"),
        [
            [{"type": "return", "value": 1}],
            [
                modify("input", "merge", {"v": 2}),
                {"type": "flow", "operation": "stop", "reason": "s"},
            ],
        ],
    ),
    chain_row(
        "interrupted",
        chain_subs("interrupted"),
        [[{"type": "deny", "reason": "late"}]],
        interrupt=True,
    ),
    chain_row(
        "held",
        [*chain_subs("held")[:2], sub("held", "audit", mode="observe")],
        [[{"type": "deny", "reason": "d"}]],
        holdObservers=True,
    ),
    chain_row(
        "native", [sub("native", "audit", mode="observe")], [[{"type": "deny", "reason": "d"}]]
    ),
]
ROWS = STEP_ROWS + CHAIN_ROWS
SOURCES = [
    {
        "descriptor": {"ref": "source-alias", "size": len(SOURCE), "sha256": SOURCE_SHA},
        "bytes": base64.b64encode(SOURCE).decode(),
    }
]


@pytest.fixture(scope="module", params=["http", "stdio"])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    transport = request.param
    home = tmp_path_factory.mktemp(f"lifecycle-{transport}")
    if transport == "http":
        with http_server_process(home, ROWS) as ready:
            report = run_lifecycle_client(home, ROWS, "http", ready, contentSources=SOURCES)
    else:
        report = run_lifecycle_client(home, ROWS, "stdio", contentSources=SOURCES)
        pid = json.loads((home / "child.json").read_text())["pid"]
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # reaped
    report["transport"] = transport
    return report


def result(report: dict[str, Any], sid: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in report["results"] if r["id"] == sid)
    return found


def actual(report: dict[str, Any], sid: str) -> Any:
    entry = result(report, sid)
    assert entry["status"] == "completed", entry
    return entry["actual"]


def entries(report: dict[str, Any], *ids: str, scenario: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in report["receipts"]["entries"]
        if e.get("id", e.get("eventId")) in ids
        or (scenario is not None and e.get("scenario") == scenario)
    ]


def kinds(found: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in found]


def uploads(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in report["receipts"]["entries"] if e["kind"] == "upload"]


def test_send_receive_accept_replay_and_observe(run: dict[str, Any]) -> None:
    assert actual(run, "basic") == {
        "published": ["basic:a"],
        "cancelled": [],
        "ignored": ["dup"],
        "states": {
            "basic:a": {
                "decision": "allow",
                "executed": True,
                "input": {"v": "settled"},
                "messages": ["published"],
            }
        },
        "observations": [
            {"eventId": "basic:a", "subscription": "metadata", "input": {"v": "settled"}},
            {"eventId": "basic:a", "subscription": "body", "input": {"v": "settled"}},
        ],
        "uploadStatuses": [201],
    }
    blob = uploads(run)[0]
    assert (
        blob["status"] == 201 and blob["size"] == len(BLOB) and blob["ref"].startswith("urn:uuid:")
    )
    found = entries(run, "basic:a")
    assert kinds(found) == [
        "received",
        "replied",
        "acquired",
        "accepted",
        "received",
        "replied",
        "observed",
        "observed",
    ]
    sent = found[0]["message"]
    assert sent["params"]["event"]["items"][0]["body"] == {"ref": blob["ref"]}  # alias rebound
    assert found[4]["message"] == sent  # the replay sent the same request again
    first, second = found[6], found[7]
    assert first["message"]["params"]["event"]["tool"]["input"] == {"v": "settled"}
    assert first["event"] == first["message"]["params"]["event"]
    assert first["message"]["params"]["event"]["items"] == sent["params"]["event"]["items"]
    assert second["message"]["params"]["event"]["items"] == [{**attachment(blob["ref"], "other")}]
    assert set(first["message"]) == {"jsonrpc", "method", "params"}
    assert set(first["message"]["params"]) == {"protocolVersion", "event"}


def test_cancel_before_the_reply_ignores_it(run: dict[str, Any]) -> None:
    assert actual(run, "cancel") == {
        "published": [],
        "cancelled": ["cancel:a"],
        "ignored": ["a"],
        "states": {},
        "observations": [{"eventId": "cancel:a", "subscription": "metadata", "input": ORIGINAL}],
        "uploadStatuses": [],
    }
    assert kinds(entries(run, "cancel:a")) == ["received", "cancelled", "observed", "replied"]


def test_cancel_after_the_reply_drops_the_staged_one(run: dict[str, Any]) -> None:
    assert actual(run, "late") == {
        "published": [],
        "cancelled": ["late:a"],
        "ignored": [],
        "states": {},
        "observations": [],
        "uploadStatuses": [],
    }
    assert kinds(entries(run, "late:a")) == ["received", "replied", "acquired", "cancelled"]


def test_fail_open_publishes_the_original_operation(run: dict[str, Any]) -> None:
    assert actual(run, "open") == {
        "published": ["open:a"],
        "cancelled": ["open:a"],
        "ignored": [],
        "states": {
            "open:a": {"decision": "allow", "executed": True, "input": ORIGINAL, "messages": []}
        },
        "observations": [{"eventId": "open:a", "subscription": "metadata", "input": ORIGINAL}],
        "uploadStatuses": [],
    }
    assert kinds(entries(run, "open:a")) == ["accepted", "cancelled", "observed"]


def test_a_reply_the_core_rules_reject_publishes_nothing(run: dict[str, Any]) -> None:
    """An operational failure: nothing is published or marked (a failOpen step could)."""
    assert actual(run, "reject")["states"] == {}
    assert actual(run, "reject")["published"] == []
    assert not [e for e in entries(run, "reject:a") if e["kind"] == "accepted"]


def test_upload_statuses_are_the_receivers(run: dict[str, Any]) -> None:
    assert actual(run, "uploads")["uploadStatuses"] == [400, 400, 401, 201]
    declared = [(e["status"], e["size"], e["sha256"][:4]) for e in uploads(run)[1:5]]
    body_sha = hashlib.sha256(b"body").hexdigest()[:4]
    empty_sha = hashlib.sha256(b"").hexdigest()[:4]
    assert declared == [
        (400, 99, body_sha),
        (400, 4, "0000"),
        (401, 4, body_sha),
        (201, 0, empty_sha),
    ]


def test_an_unuploaded_content_source_is_uploaded_before_its_first_use(run: dict[str, Any]) -> None:
    assert actual(run, "sourced")["published"] == ["sourced:a"]
    source = uploads(run)[-1]
    assert source["status"] == 201 and source["sha256"] == SOURCE_SHA
    assert run["contentUploads"] == [
        {
            "sourceRef": "source-alias",
            "descriptor": {"ref": source["ref"], "size": len(SOURCE), "sha256": SOURCE_SHA},
            "method": "hooks/intercept",
            "eventId": "sourced:a",
        }
    ]
    received = entries(run, "sourced:a")[0]
    assert received["message"]["params"]["event"]["items"][0]["body"] == {"ref": source["ref"]}
    position = run["receipts"]["entries"].index(source)
    assert position < run["receipts"]["entries"].index(received)


def test_an_unknown_op_makes_the_row_unsupported(run: dict[str, Any]) -> None:
    entry = result(run, "unknown-op")
    assert entry["status"] == "unsupported" and "'dance'" in entry["error"]


def test_emit_drops_the_stray_frame_before_the_next_step(run: dict[str, Any]) -> None:
    entry = result(run, "emit")
    if run["transport"] == "http":
        assert entry["status"] == "unsupported" and "stdio" in entry["error"]
        return
    assert entry["actual"]["ignored"] == ["unsolicited:ghost"]
    assert entry["actual"]["states"]["emit:a"]["input"] == {"v": "live"}
    found = [(e["kind"], e.get("id")) for e in entries(run, "emit:a", "ghost")]
    assert found == [
        ("received", "emit:a"),
        ("emitted", "ghost"),
        ("discarded", "ghost"),
        ("replied", "emit:a"),
        ("acquired", "emit:a"),
        ("accepted", "emit:a"),
    ]


def chain_messages(run: dict[str, Any], sid: str, kind: str) -> list[dict[str, Any]]:
    return [e["message"] for e in entries(run, sid) if e["kind"] == kind]


def test_chain_carries_state_and_projects_items(run: dict[str, Any]) -> None:
    assert actual(run, "carry") == {
        "called": ["carry:x", "carry:y", "carry:z"],
        "failures": [],
        "observations": ["carry:audit"],
        "input": {"v": 1},
    }
    calls = chain_messages(run, "carry", "received")
    assert [c["params"]["state"] for c in calls] == [
        {"permission": "none", "candidate": None},
        {"permission": "none", "candidate": None},  # the allow was for the original input
        {"permission": "ask", "candidate": None},
    ]
    assert [c["params"]["event"]["tool"]["input"] for c in calls] == [ORIGINAL, {"v": 1}, {"v": 1}]
    assert [len(c["params"]["event"]["items"]) for c in calls] == [1, 0, 1]  # y: omit
    found = entries(run, "carry", scenario="carry")
    assert kinds(found) == ["received", "replied"] * 3 + ["chain-settled", "observed"]
    note = found[-1]["message"]
    assert note["params"]["event"]["tool"]["input"] == {"v": 1} and "id" not in note


def test_chain_fail_closed_settles_with_the_original_input(run: dict[str, Any]) -> None:
    assert actual(run, "closed") == {
        "called": ["closed:x"],
        "failures": ["closed:x"],
        "observations": ["closed:y", "closed:z", "closed:audit"],
        "input": ORIGINAL,
    }
    notes = chain_messages(run, "closed", "observed")
    assert [n["params"]["event"]["tool"]["input"] for n in notes] == [ORIGINAL] * 3
    assert [len(n["params"]["event"]["items"]) for n in notes] == [0, 1, 1]


def test_chain_fail_open_goes_on_and_stop_short_circuits(run: dict[str, Any]) -> None:
    merged = {**ORIGINAL, "v": 2}
    assert actual(run, "opened") == {
        "called": ["opened:x", "opened:y"],
        "failures": ["opened:x"],
        "observations": ["opened:z", "opened:audit"],
        "input": merged,
    }
    calls = chain_messages(run, "opened", "received")
    assert calls[1]["params"]["event"]["tool"]["input"] == ORIGINAL  # a failure contributes nothing


def test_chain_interrupt_settles_before_the_reply(run: dict[str, Any]) -> None:
    assert actual(run, "interrupted") == {
        "called": ["interrupted:x"],
        "failures": [],
        "observations": [],
        "input": ORIGINAL,
    }
    found = entries(run, "interrupted", scenario="interrupted")
    assert kinds(found) == ["received", "cancelled", "chain-settled", "replied"]


def test_held_observers_are_marked_after_settlement(run: dict[str, Any]) -> None:
    assert actual(run, "held")["observations"] == ["held:y", "held:audit"]
    found = entries(run, "held", scenario="held")
    # each: the client's mark (with scenario), then the server's own (without), as
    # upstream servers record it, just before the notification's observed entry
    assert [(e["kind"], "scenario" in e) for e in found] == [
        ("received", False),
        ("replied", False),
        ("chain-settled", True),
        *[("observer-blocked", True), ("observer-blocked", False), ("observed", False)] * 2,
    ]


def test_an_observe_only_chain_calls_nothing(run: dict[str, Any]) -> None:
    assert actual(run, "native") == {
        "called": [],
        "failures": [],
        "observations": ["native:audit"],
        "input": ORIGINAL,
    }
    assert kinds(entries(run, "native", scenario="native")) == ["chain-settled", "observed"]


def test_an_unknown_suite_reports_every_row_unsupported(tmp_path: Path) -> None:
    report = run_lifecycle_client(tmp_path, ROWS[:2], "stdio", suite="lifecycle")
    assert all(r["status"] == "completed" for r in report["results"])
    config = json.loads((tmp_path / "client.json").read_text())
    config["suite"] = "catalogue-of-tomorrow"
    path = write(tmp_path / "other.json", config)
    completed = subprocess.run(
        ahp_command("lifecycle-client", path),
        cwd=ADAPTER_DIR,
        env=client_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 0
    other = json.loads((tmp_path / "report.json").read_text())
    assert [(r["status"], "catalogue-of-tomorrow" in r["error"]) for r in other["results"]] == [
        ("unsupported", True)
    ] * 2
