"""The isolation suite without adapters: the cases derived from the upstream row, the
capture origin's rules on raw requests (HTTP and HTTPS), and the per-case verdict.

Every request here is sent by the harness's own raw client (`interop.runtime.probe`),
so each rule is broken exactly once; the end-to-end runs are in
test_isolation_matrix.py.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from interop import ROOT
from interop.redact import Redactor
from interop.results import ERRORS, Status
from interop.runtime import probe
from interop.runtime.listener import server_tls
from interop.suites.base import ScenarioError
from interop.suites.isolation import origins
from interop.suites.isolation.origins import Capture, Captured
from interop.suites.isolation.scenarios import CASES, SOURCE_ROW, load_sets
from interop.suites.isolation.suite import IsolationSuite, _capture_pki
from interop.suites.isolation.verify import OriginRecord, capture_problems, verify_case
from interop.trust import Trust

UPSTREAM = ROOT / "scenarios" / "upstream" / "lifecycle-scenarios.json"
BODY = b"\x00\xffsome upload bytes"
SHA = hashlib.sha256(BODY).hexdigest()


def _clean_headers(**changes: str | None) -> list[tuple[str, str]]:
    headers = {
        "Content-Type": "application/octet-stream",
        "AHP-Content-SHA256": SHA,
    }
    for name, value in changes.items():
        headers.pop(name.replace("_", "-"), None)
        if value is not None:
            headers[name.replace("_", "-")] = value
    return list(headers.items())


# ---------------------------------------------------------------- the cases


def test_the_cases_are_derived_from_the_upstream_row_with_ids_and_bytes_of_our_own() -> None:
    (isolation,) = load_sets([UPSTREAM])
    upstream = next(
        s for s in json.loads(UPSTREAM.read_text())["scenarios"] if s["id"] == SOURCE_ROW
    )
    theirs = base64.b64decode(upstream["steps"][0]["bodyBase64"])
    assert [c.id for c in isolation.cases] == [c.id for c in CASES]
    bodies = set()
    for item in isolation.cases:
        raw = item.raw
        for key, request in raw["requests"].items():
            assert request["id"].startswith(item.id + ":"), key
            assert request["params"]["event"]["id"] == request["id"]
            assert "items" not in request["params"]["event"]  # the capture's ref means nothing
            assert "subscriptionId" not in request["params"]
            assert raw["responses"][key]["id"] == request["id"]
        (upload,) = [s for s in raw["steps"] if s["op"] == "upload"]
        body = base64.b64decode(upload["bodyBase64"])
        assert body == item.case.body != theirs and b"\x00" in body and b"\xff" in body
        assert (upload["size"], upload["sha256"]) == (len(body), hashlib.sha256(body).hexdigest())
        bodies.add(body)
        ops = [s["op"] for s in raw["steps"]]
        tail = ["upload", "send", "wait", "release", "receive", "accept"]
        if item.case.cookie:  # one intercept answered (the cookie set) before the upload
            assert ops == ["send", "wait", "release", "receive", "accept", *tail]
        else:
            assert ops == tail
        assert item.expected["uploadStatuses"] == [item.case.upload_status]
    assert len(bodies) == len(CASES)
    redirect = next(c for c in isolation.cases if c.case.origin == "redirect")
    assert redirect.expected["uploadStatuses"] == [307]


def test_a_row_as_the_client_gets_it_carries_its_own_upload_block_and_no_answers() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = isolation.cases[0]
    block = {"endpoint": "http://127.0.0.1:1/capture", "timeoutMs": 5000, "maxBytes": 10}
    blind = item.row(block, blind=True)
    assert "expected" not in blind
    (upload,) = [s for s in blind["steps"] if s["op"] == "upload"]
    assert upload["upload"] == block and "auth" not in upload["upload"]
    assert "expected" in item.row(block, blind=False)
    event = item.event_part()
    assert [s["op"] for s in event.steps] == ["send", "wait", "release", "receive", "accept"]
    assert event.expected["uploadStatuses"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["expected"]["states"].popitem(), "no longer agrees"),
        (lambda s: s["steps"].pop(), "derives its cases from a row"),
        (lambda s: s.__setitem__("id", "renamed"), "no scenario"),
        (
            lambda s: s["expected"]["states"][next(iter(s["expected"]["states"]))].update(
                decision="deny"
            ),
            "no longer agrees",
        ),
    ],
)
def test_a_vector_whose_row_changed_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    document = json.loads(UPSTREAM.read_text())
    row = next(s for s in document["scenarios"] if s["id"] == SOURCE_ROW)
    change(row)
    path = tmp_path / "lifecycle-scenarios.json"
    path.write_text(json.dumps(document))
    with pytest.raises(ScenarioError, match=message):
        load_sets([path])


def test_one_file_only(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="one lifecycle file"):
        load_sets([UPSTREAM, UPSTREAM])


def test_the_suite_runs_every_http_mode_and_stdio_with_none_only() -> None:
    from interop.grid import Combination

    suite = IsolationSuite()
    for mode in ("none", "bearer", "oauth", "mtls", "workload"):
        assert suite.applicability(Combination("a", "b", "http", mode), {}) is None
    assert suite.applicability(Combination("a", "b", "stdio", "none"), {}) is None
    assert "process trust" in str(suite.applicability(Combination("a", "b", "stdio", "mtls"), {}))


def test_every_class_the_suite_names_is_in_the_error_table() -> None:
    import interop.suites.isolation.verify as verify

    for name in (*verify.PRIORITY, "CaptureMissing"):
        assert name in ERRORS


# ---------------------------------------------------------------- the capture's rules


@pytest.fixture
def capture() -> Iterator[Capture]:
    origin = Capture(
        "/capture?case=x", labels=origins.secret_label({"the secret": "s3cr3t!!"}, bool)
    )
    try:
        yield origin
    finally:
        origin.close()


def _one(capture: Capture) -> Captured:
    captured, handshakes = capture.snapshot()
    assert len(captured) == 1 and handshakes == []
    return captured[0]


def test_a_clean_upload_gets_a_fresh_ref(capture: Capture) -> None:
    first = probe.send(capture.endpoint, headers=_clean_headers(), body=BODY)
    second = probe.send(capture.endpoint, headers=_clean_headers(), body=BODY)
    for answer in (first, second):
        assert answer.status == 201
        receipt = answer.json()
        assert set(receipt) == {"ref", "size", "sha256"}
        assert receipt["ref"].startswith("urn:uuid:")
        assert (receipt["size"], receipt["sha256"]) == (len(BODY), SHA)
    assert first.json()["ref"] != second.json()["ref"]
    captured, _ = capture.snapshot()
    assert [c.problems for c in captured] == [[], []]
    assert captured[0].summary()["headers"]["content-length"] == 1


@pytest.mark.parametrize(
    ("headers", "extra", "error_class"),
    [
        (_clean_headers(Authorization="Bearer s3cr3t!!"), {}, "CaptureLeak"),
        (_clean_headers(Proxy_Authorization="Basic eA=="), {}, "CaptureLeak"),
        (_clean_headers(Cookie="a=b"), {}, "CaptureLeak"),
        (_clean_headers(AHP_Subscription="body"), {}, "CaptureIdentity"),
        (_clean_headers(AHP_Content_Ref="mine"), {}, "CaptureIdentity"),
        (_clean_headers(Content_Type="text/plain"), {}, "CaptureFraming"),
        (_clean_headers(Content_Type=None), {}, "CaptureFraming"),
        (_clean_headers(Content_Encoding="gzip"), {}, "CaptureFraming"),
        (_clean_headers(AHP_Content_SHA256=None), {}, "CaptureFraming"),
        ([*_clean_headers(), ("AHP-Content-SHA256", SHA)], {}, "CaptureFraming"),
        (_clean_headers(AHP_Content_SHA256="0" * 64), {}, "CaptureIntegrity"),
        (
            [*_clean_headers(), ("Content-Length", "19"), ("Content-Length", "19")],
            {},
            "CaptureFraming",
        ),
        ([*_clean_headers(), ("Content-Length", "019")], {}, "CaptureFraming"),
        ([*_clean_headers(), ("Content-Length", str(2 * 1024 * 1024))], {}, "CaptureFraming"),
        (_clean_headers(), {"declared_length": 99}, "CaptureFraming"),
        (
            [*_clean_headers(), ("Transfer-Encoding", "chunked")],
            {"body": b"13\r\n" + BODY + b"\r\n0\r\n\r\n"},
            "CaptureFraming",
        ),
    ],
)
def test_each_broken_rule_is_refused_and_named(
    capture: Capture, headers: list[tuple[str, str]], extra: dict[str, Any], error_class: str
) -> None:
    answer = probe.send(capture.endpoint, headers=headers, **{"body": BODY, **extra})
    assert answer.status == 400
    captured = _one(capture)
    assert error_class in {kind for kind, _ in captured.problems}, captured.problems
    assert "s3cr3t" not in json.dumps(captured.summary())  # names and labels, never values


def test_a_leaked_header_is_named_with_whose_it_is(capture: Capture) -> None:
    probe.send(capture.endpoint, headers=_clean_headers(Authorization="Bearer s3cr3t!!"), body=BODY)
    assert _one(capture).problems == [
        ("CaptureLeak", "the upload carried Authorization (the secret)")
    ]


def test_the_endpoint_is_used_exactly(capture: Capture) -> None:
    bare = capture.endpoint.split("?", 1)[0]
    assert probe.send(bare, headers=_clean_headers(), body=BODY).status == 400
    assert _one(capture).problems[0][0] == "CaptureTarget"


def test_a_redirecting_origin_answers_307_to_its_target() -> None:
    origin = Capture("/capture", redirect="http://127.0.0.1:9/elsewhere")
    try:
        answer = probe.send(origin.endpoint, headers=_clean_headers(), body=BODY)
        assert answer.status == 307 and answer.headers["location"] == "http://127.0.0.1:9/elsewhere"
        assert _one(origin).problems == []
    finally:
        origin.close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Trust, dict[str, str]]]:
    redactor = Redactor()
    trust = Trust.create(redactor, parent=tmp_path_factory.mktemp("trust"))

    class Ctx:
        pass

    ctx: Any = Ctx()
    ctx.redactor = redactor
    files = _capture_pki(ctx, tmp_path_factory.mktemp("capture") / "pki")
    try:
        yield trust, files
    finally:
        trust.destroy()


def _tls_capture(trust: Trust, files: dict[str, str]) -> Capture:
    context = server_tls(files["cert"], files["key"], trust.path("ca.pem"), request_only=True)
    return Capture(
        "/capture",
        context=context,
        certificate_label=lambda der: "the event's client certificate",
    )


@pytest.mark.parametrize("presented", [None, "client", "untrusted-client"])
def test_the_https_capture_requests_a_client_certificate_and_records_one(
    pki: tuple[Trust, dict[str, str]], presented: str | None
) -> None:
    trust, files = pki
    origin = _tls_capture(trust, files)
    try:
        context = ssl.create_default_context(cafile=files["ca"])
        if presented is not None:
            context.load_cert_chain(
                trust.path(f"{presented}.pem"), trust.path(f"{presented}-key.pem")
            )
        try:
            answer = probe.send(
                origin.endpoint, headers=_clean_headers(), body=BODY, context=context
            )
        except (ssl.SSLError, ConnectionError, OSError):
            answer = None
    finally:
        origin.close()  # joins every connection: nothing is recorded after this
    captured, handshakes = origin.snapshot()
    record = OriginRecord(captured, handshakes)
    (isolation,) = load_sets([UPSTREAM])
    tls_case = next(c for c in isolation.cases if c.case.origin == "tls")
    classes = [kind for kind, _ in capture_problems(tls_case, record)]
    if presented is None:
        assert answer is not None and answer.status == 201
        assert captured[0].tls and captured[0].client_certificate is None
    elif presented == "client":  # chains to the run's CA: accepted, recorded, refused
        assert answer is not None and answer.status == 400
        assert captured[0].client_certificate == "the event's client certificate"
        assert classes[0] == "CaptureLeak"
    else:  # from another CA: the handshake fails, the presentation is still named
        assert captured == [] and handshakes == ["CERTIFICATE_VERIFY_FAILED"]
        assert classes[:2] == ["CaptureLeak", "CaptureMissing"]


def test_a_client_that_does_not_trust_the_capture_is_a_missing_upload(
    pki: tuple[Trust, dict[str, str]],
) -> None:
    trust, files = pki
    origin = _tls_capture(trust, files)
    try:
        with pytest.raises(ssl.SSLError):
            probe.send(
                origin.endpoint,
                headers=_clean_headers(),
                body=BODY,
                context=ssl.create_default_context(cafile=trust.path("ca.pem")),
            )
    finally:
        origin.close()
    captured, handshakes = origin.snapshot()
    (isolation,) = load_sets([UPSTREAM])
    tls_case = next(c for c in isolation.cases if c.case.origin == "tls")
    problems = capture_problems(tls_case, OriginRecord(captured, handshakes))
    assert [kind for kind, _ in problems] == ["CaptureMissing"]
    assert "handshake" in problems[0][1]


# ---------------------------------------------------------------- the verdict


def _report(item: Any, statuses: list[int]) -> dict[str, Any]:
    actual = copy.deepcopy(item.expected)
    actual["uploadStatuses"] = statuses
    return {
        "language": "python",
        "results": [{"id": item.id, "status": "completed", "actual": actual}],
        "contentUploads": [],
    }


def _entries(item: Any) -> list[dict[str, Any]]:
    """The receipts an honest run of `item` leaves on the event server."""
    entries: list[dict[str, Any]] = []
    for step in item.raw["steps"]:
        if step["op"] == "send":
            request = item.raw["requests"][step["key"]]
            rid = request["id"]
            entries += [
                {"kind": "received", "id": rid, "message": request},
                {"kind": "replied", "id": rid},
                {"kind": "acquired", "id": rid, "scenario": item.id},
                {"kind": "accepted", "id": rid, "scenario": item.id},
            ]
    return entries


def _clean_capture(item: Any, status: int = 201) -> Captured:
    body = item.case.body
    return Captured(
        method="POST",
        target="/capture",
        tls=False,
        client_certificate=None,
        headers={"content-length": 1, "content-type": 1, "ahp-content-sha256": 1},
        framing={},
        sensitive={},
        size=len(body),
        sha256=hashlib.sha256(body).hexdigest(),
        complete=True,
        status=status,
    )


def _verdict(item: Any, record: OriginRecord, statuses: list[int]) -> Any:
    row, errors = verify_case(
        item,
        record,
        report=_report(item, statuses),
        entries=_entries(item),
        client_exit=0,
        language="python",
        blind=True,
        stage="client[x]",
        prior_errors=[],
    )
    assert errors == []
    return row


def test_a_clean_case_passes_and_says_so() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = isolation.cases[0]
    row = _verdict(item, OriginRecord([_clean_capture(item)]), [201])
    assert row.status == Status.PASSED, row.error
    assert row.diagnostics["independentUploads"] == 1
    assert row.diagnostics["credentialIsolationVerified"] is True


def test_no_capture_is_never_a_pass_even_when_the_client_reports_201() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = isolation.cases[0]
    row = _verdict(item, OriginRecord(), [201])
    assert row.status == Status.FAILED and row.error.startswith("CaptureMissing:")
    assert row.diagnostics["credentialIsolationVerified"] is False


@pytest.mark.parametrize(
    ("origin", "record", "statuses", "error_class"),
    [
        ("plain", lambda i: OriginRecord([_clean_capture(i)] * 2), [201], "CaptureRepeated"),
        ("plain", lambda i: OriginRecord([_clean_capture(i)]), [400], "UploadStatusMismatch"),
        (
            "redirect",
            lambda i: OriginRecord([_clean_capture(i, 307)], followed=[_clean_capture(i)]),
            [201],
            "RedirectFollowed",
        ),
        (
            "redirect",
            lambda i: OriginRecord([_clean_capture(i, 307)]),
            [201],
            "UploadStatusMismatch",
        ),
    ],
)
def test_each_case_rule_names_its_class(
    origin: str, record: Any, statuses: list[int], error_class: str
) -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = next(c for c in isolation.cases if c.case.origin == origin and not c.case.cookie)
    row = _verdict(item, record(item), statuses)
    assert row.status == Status.FAILED and row.error.startswith(f"{error_class}:"), row.error


def test_other_bytes_at_the_capture_fail_integrity() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = isolation.cases[0]
    other = _clean_capture(item)
    other.sha256 = "0" * 64
    row = _verdict(item, OriginRecord([other]), [201])
    assert row.error.startswith("CaptureIntegrity:")


def test_an_upload_to_the_event_server_is_named_as_well() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = isolation.cases[0]
    entries = [{"kind": "upload", "status": 201, "size": 3, "sha256": SHA, "ref": "urn:uuid:x"}]
    row, errors = verify_case(
        item,
        OriginRecord(),
        report=_report(item, [201]),
        entries=[*entries, *_entries(item)],
        client_exit=0,
        language="python",
        blind=True,
        stage="client[x]",
        prior_errors=[],
    )
    assert row.error.startswith("CaptureMissing:")
    assert [e.error_class for e in errors] == ["UploadMismatch"]


def test_a_cookie_case_upload_before_any_cookie_proves_nothing() -> None:
    (isolation,) = load_sets([UPSTREAM])
    item = next(c for c in isolation.cases if c.case.cookie)
    early = _clean_capture(item)
    early.cookies_before = 0
    row = _verdict(item, OriginRecord([early]), [201])
    assert row.error.startswith("CookieNotSet:"), row.error
    late = _clean_capture(item)
    late.cookies_before = 1
    assert _verdict(item, OriginRecord([late]), [201]).status == Status.PASSED
