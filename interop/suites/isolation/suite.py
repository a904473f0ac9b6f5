"""The sender isolation suite: uploads carry none of the event's credentials.

Each combination is a job of its own. Over HTTP one event server serves
every case of the combination (each case has its own request ids); over
stdio each case's client starts its own. Per case the harness opens that
case's upload origins, runs one lifecycle client process over a scenario
file holding only that case (its upload step with its own upload block:
the capture's endpoint, no credential), closes the origins and judges the
row from what they recorded, the client's report and the event server's
receipts of that run. One process per case keeps the cases apart: a cookie
set for one case, a retried upload or a crash can only fail its own row
(docs/ISOLATION.md). Upload and cookie secrets are made per combination and
given to the redactor before any process starts.
"""

from __future__ import annotations

import hashlib
import secrets
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.capture import Relays
from interop.runtime.client import ClientRun, run_client, stdio_server
from interop.runtime.context import RunContext
from interop.runtime.listener import TlsContext, server_tls
from interop.runtime.origin import CookieRelay
from interop.runtime.probe import tls_context
from interop.runtime.server import Server, ServerStartError
from interop.suites.base import Done, Job
from interop.suites.isolation import origins
from interop.suites.isolation.origins import Capture
from interop.suites.isolation.scenarios import (
    PLAIN,
    REDIRECT,
    TLS,
    UPLOAD_MAX_BYTES,
    UPLOAD_TIMEOUT_MS,
    IsolationCase,
    IsolationSet,
    IsolationSets,
    load_sets,
)
from interop.suites.isolation.verify import OriginRecord, verify_case
from interop.suites.steps import (
    UPLOAD_TOKEN_ENV,
    keep_stdio_frames,
    one_job_each,
    run_sets,
    stdio_auth_none,
)
from interop.suites.wire import (
    Contradiction,
    mark_rows,
    read_against_wire,
    stdio_contradictions,
)
from interop.trust import Authority, redact_key

CAPTURE_PATH = "/capture"
COOKIE_NAME = "ahp-isolation"


CASE_OWN = frozenset(
    {
        "ReportMissing",
        "ReportMalformed",
        "ClientExit",
        "ClientTimeout",
        "ClientSpawn",
        "ResultMissing",
        "ResultUnknownId",
        "ResultDuplicateId",
        "LanguageMismatch",
    }
)
V1_TLS = (
    "needs the project extension 'upload tls' (the upload block's tls.caFile trusts the "
    "HTTPS capture origin: docs/ISOLATION.md), which a contract v1 client does not read"
)


class IsolationSuite:
    name = "isolation"

    def load_sets(self, paths: list[Path]) -> IsolationSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        return stdio_auth_none(combination)

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return one_job_each(combinations, adapters)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: IsolationSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        def run_set(outcome: Outcome, combination: Combination, chosen: IsolationSet) -> None:
            _Combination(ctx, outcome, combination, chosen, adapters).run()

        return run_sets(self.name, job, ctx, sets, adapters, run_set, done)


class _Combination:
    """One combination's cases against one event server (HTTP) or one per case (stdio)."""

    def __init__(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        isolation_set: IsolationSet,
        adapters: dict[str, Adapter],
    ) -> None:
        self.ctx = ctx
        self.outcome = outcome
        self.combination = combination
        self.set = isolation_set
        self.client = adapters[combination.client]
        self.server_adapter = adapters[combination.server]
        self.transport = combination.transport
        self.home = ctx.unique(f"isolation-{combination.client}-{combination.server}")
        self.upload_token = secrets.token_urlsafe(24)
        self.cookie_secret = secrets.token_urlsafe(24)
        for secret in (self.upload_token, self.cookie_secret):
            ctx.redactor.add(secret)
        self.pki = _capture_pki(ctx, self.home / "capture-pki")
        self.cases = [c for c in isolation_set.cases if self.transport in c.case.transports]
        placeholder = {"endpoint": "http://127.0.0.1:9/unused", "timeoutMs": UPLOAD_TIMEOUT_MS}
        self.server_file = isolation_set.write(
            self.home / "server.json", [c.row(placeholder, blind=True) for c in self.cases]
        )
        self.server_extra = {"suite": "lifecycle", "uploadAuth": {"token": self.upload_token}}
        self.server: Server | None = None
        self.offset = 0  # receipt entries of earlier cases (HTTP: one server for every case)
        trust = ctx.trust
        self.labels = origins.secret_label(
            {
                "the event's bearer token": trust.bearer_token,
                "the OAuth client secret": trust.client_secret,
                "the configured upload token": self.upload_token,
                "the event server's cookie": self.cookie_secret,
            },
            lambda value: ctx.redactor(value) != value,
        )
        self.certificates = {
            _der_digest(trust.path("client.pem")): "the event's client certificate",
            _der_digest(trust.path("untrusted-client.pem")): "the run's untrusted certificate",
        }

    def certificate_label(self, der: bytes) -> str:
        found = self.certificates.get(hashlib.sha256(der).hexdigest())
        return found or "a certificate from the run's CA"

    def run(self) -> None:
        outcome = self.outcome
        if self.transport == "http":
            self.server = Server(
                self.ctx,
                self.server_adapter,
                "http",
                self.combination.auth,
                self.server_file,
                command_key="lifecycleServer",
                extra=self.server_extra,
            )
            try:
                self.server.start()
            except ServerStartError as exc:
                outcome.errors.append(CombinationError("server-start", exc.error_class, str(exc)))
            if not outcome.errors and self.server.upload_endpoint is None:
                outcome.errors.append(
                    CombinationError(
                        "server-start",
                        "ReadinessMalformed",
                        "a lifecycle server's readiness needs uploadEndpoint",
                    )
                )
        cases = self.cases
        if outcome.errors:  # the event server did not start: no case can run
            outcome.rows += self._not_run(cases, "the event server did not start")
            cases = []
        for number, item in enumerate(cases):
            if item.case.origin == TLS and not self.client.blind:
                # the HTTPS origin is trusted through the upload block's `tls.caFile`, an
                # extension of ours a contract v1 client does not read
                outcome.rows.append(
                    RowVerdict(
                        self.set.name,
                        item.id,
                        Status.UNSUPPORTED,
                        item.expected,
                        error=V1_TLS,
                    )
                )
                continue
            if self.ctx.cancelled.is_set():
                outcome.errors.append(
                    CombinationError("run", "Cancelled", "the run was interrupted")
                )
                outcome.rows += self._not_run(cases[number:], "the run was interrupted")
                break
            row, errors = self._case(item)
            # each case is a client process of its own: what went wrong with that
            # process fails its row alone; the shared server's faults stay the
            # combination's
            own = [e for e in errors if e.error_class in CASE_OWN]
            if own:
                row.status = Status.FAILED
                row.error = "; ".join(f"{e.error_class}: {e.message}" for e in own)[:400]
            outcome.rows.append(row)
            outcome.errors += [e for e in errors if e.error_class not in CASE_OWN]
        outcome.rows += [
            RowVerdict(
                self.set.name,
                c.id,
                Status.INAPPLICABLE,
                c.expected,
                error=c.case.inapplicable_reason,
            )
            for c in self.set.cases
            if self.transport not in c.case.transports
        ]
        if self.server is not None:
            self.server.stop()
            self.ctx.keep_log(self.server.log, f"{self.combination.key}/server.log")
            if self.server.leaks:
                outcome.errors.append(
                    CombinationError(
                        "server-stop",
                        "ProcessLeak",
                        f"left running by the server: {len(self.server.leaks)} process(es)",
                    )
                )

    def _not_run(self, cases: list[IsolationCase], why: str) -> list[RowVerdict]:
        return [
            RowVerdict(self.set.name, c.id, Status.NOT_RUN, c.expected, error=why) for c in cases
        ]

    def _origin(self, stack: ExitStack, item: IsolationCase) -> tuple[Capture, Capture | None]:
        """The case's upload origin (and the redirect target), closed with `stack`."""
        path = f"{CAPTURE_PATH}?case={item.id}"
        common: dict[str, Any] = {
            "labels": self.labels,
            "certificate_label": self.certificate_label,
        }
        target: Capture | None = None
        if item.case.origin == REDIRECT:
            target = Capture(f"{CAPTURE_PATH}?case={item.id}&redirected=1", **common)
            stack.callback(target.close)
            origin = Capture(path, redirect=target.endpoint, **common)
        elif item.case.origin == TLS:
            context = server_tls(
                self.pki["cert"], self.pki["key"], self.ctx.trust.path("ca.pem"), request_only=True
            )
            origin = Capture(path, context=context, **common)
        else:
            assert item.case.origin == PLAIN
            origin = Capture(path, **common)
        stack.callback(origin.close)
        return origin, target

    def _relay(self, stack: ExitStack) -> CookieRelay:
        """A relay in front of the event server that sets this combination's cookie."""
        assert self.server is not None
        endpoint = self.server.endpoint
        listen: TlsContext | None = None
        upstream: TlsContext | None = None
        if endpoint.startswith("https:"):
            trust, mode = self.ctx.trust, self.combination.auth
            listen = server_tls(
                trust.path("server.pem"),
                trust.path("server-key.pem"),
                trust.path("ca.pem") if mode == "mtls" else None,
                request_only=False,
            )
            upstream = tls_context(trust, mode, self.ctx.profile)
        relay = CookieRelay(
            endpoint,
            f"{COOKIE_NAME}={self.cookie_secret}; Path=/; HttpOnly",
            context=listen,
            upstream_context=upstream,
            timeout=self.ctx.timeouts.client,
        )
        stack.callback(relay.close)
        return relay

    def _this_case(self) -> tuple[Any, list[CombinationError]]:
        """The shared server's entries since the last case's (this case's record)."""
        assert self.server is not None
        every, errors = self.server.entries()
        if every is None:
            return None, errors
        entries, self.offset = every[self.offset :], len(every)
        return entries, errors

    def _case(self, item: IsolationCase) -> tuple[RowVerdict, list[CombinationError]]:
        """One case: its origins opened, its client run (against the shared event server
        over HTTP, its own over stdio), its origins closed, then its row judged from
        what they recorded, the client's report and the event server's receipts."""
        stage = f"client[{item.id}]"
        home = self.ctx.unique(f"isolation-{item.id}")
        record = OriginRecord()
        with ExitStack() as stack:
            origin, target = self._origin(stack, item)
            client = self._case_client(item, origin, home, stage)
            if self.server is not None:
                ran = self._http_run(stack, item, origin, client)
            else:
                ran = self._stdio_run(item, client)
        # every origin is closed (joined): nothing more can arrive
        record.captured, record.handshakes = origin.snapshot()
        if target is not None:
            record.followed, _ = target.snapshot()
        return self._verdict(item, client, ran, record)

    def _case_client(
        self, item: IsolationCase, origin: Capture, home: Path, stage: str
    ) -> _CaseClient:
        """The case's client as configured: its scenario file (only this case, its upload
        step's block naming the origin, with `tls.caFile` the capture CA for the HTTPS
        origin), its configured upload (bearer from UPLOAD_TOKEN_ENV; the event
        server's upload endpoint is added over HTTP) and the upload token in its
        environment."""
        upload: dict[str, Any] = {
            "endpoint": origin.endpoint,
            "timeoutMs": UPLOAD_TIMEOUT_MS,
            "maxBytes": UPLOAD_MAX_BYTES,
        }
        if item.case.origin == TLS:
            upload["tls"] = {"caFile": self.pki["ca"]}
        given = self.set.write(home / "client.json", [item.row(upload, blind=self.client.blind)])
        configured: dict[str, Any] = {
            "auth": {"type": "bearer", "tokenEnv": UPLOAD_TOKEN_ENV},
            "timeoutMs": UPLOAD_TIMEOUT_MS,
            "maxBytes": UPLOAD_MAX_BYTES,
        }
        extra: dict[str, Any] = {
            "suite": "lifecycle",
            "childPidFile": str(home / "child.json"),
            "upload": configured,
            "contentSources": [],
        }
        return _CaseClient(stage, given, extra, {UPLOAD_TOKEN_ENV: self.upload_token})

    def _http_run(
        self, stack: ExitStack, item: IsolationCase, origin: Capture, client: _CaseClient
    ) -> _CaseRun:
        """The case's client over HTTP against the shared event server: through the
        cookie relay when the case has a cookie (the origin told what it answered),
        its event and control exchanges through a recheck's recording relays (closed
        with `stack`); then this case's receipts read against the wire. A receipt error
        while the server has exited is that exit."""
        server = self.server
        assert server is not None
        client.extra["upload"]["endpoint"] = server.upload_endpoint
        endpoint = server.endpoint
        if item.case.cookie:
            relay = self._relay(stack)
            origin.cookies = relay.answered
            endpoint = relay.endpoint
        # a recheck: the event and control exchanges through recording relays
        relays = Relays(self.ctx, self.combination.auth, endpoint, server.control)
        stack.callback(relays.stop)
        client.extra["controlEndpoint"] = relays.control
        run = run_client(
            self.ctx,
            self.client,
            stage=client.stage,
            scenario_file=client.scenario_file,
            transport="http",
            auth=self.combination.auth,
            endpoint=relays.endpoint,
            command_key="lifecycleClient",
            extra=client.extra,
            env=client.env,
            schema="lifecycle-client-config.schema.json",
        )
        entries, receipt_errors, found = read_against_wire(
            self.ctx, relays, self._this_case, self.combination.key, item.id
        )
        if receipt_errors and server.exit_description() is not None:
            receipt_errors = [
                CombinationError("server", "ServerExit", f"the server {server.exit_description()}")
            ]
        return _CaseRun(run, entries, receipt_errors, found)

    def _stdio_run(self, item: IsolationCase, client: _CaseClient) -> _CaseRun:
        """The case's client over stdio, spawning its own event server: the entries are
        the receipts its report carries; on a recheck the stdio frames are kept and the
        entries held to them."""
        keys, wire_log = stdio_server(
            self.ctx,
            self.server_adapter,
            self.server_file,
            command_key="lifecycleServer",
            extra=self.server_extra,
        )
        run = run_client(
            self.ctx,
            self.client,
            stage=client.stage,
            scenario_file=client.scenario_file,
            transport="stdio",
            auth="none",
            stdio_server=keys,
            command_key="lifecycleClient",
            extra=client.extra,
            env=client.env,
            schema="lifecycle-client-config.schema.json",
        )
        report = run.report if isinstance(run.report, dict) else {}
        receipts = report.get("receipts")
        entries = receipts.get("entries") if isinstance(receipts, dict) else None
        found: list[Contradiction] = []
        if self.ctx.capture:
            lines = keep_stdio_frames(self.ctx, self.combination.key, item.id, wire_log)
            found = stdio_contradictions(entries, lines)
        return _CaseRun(run, entries, [], found)

    def _verdict(
        self, item: IsolationCase, client: _CaseClient, ran: _CaseRun, record: OriginRecord
    ) -> tuple[RowVerdict, list[CombinationError]]:
        """The case's row judged (verify_case) from its origins' record, the client's
        report and exit, and the entries; a recheck's contradictions marked on it. The
        client's log is kept as `<combination>/client-<case>.log`."""
        run = ran.run
        self.ctx.keep_log(run.log, f"{self.combination.key}/client-{item.id}.log")
        row, problems = verify_case(
            item,
            record,
            report=run.report,
            entries=ran.entries,
            client_exit=run.exit_code if self.client.blind else None,
            language=self.client.language,
            blind=self.client.blind,
            stage=client.stage,
            prior_errors=run.errors + ran.errors,
        )
        mark_rows([row], ran.found, transport=self.combination.transport)
        return row, problems


@dataclass
class _CaseClient:
    """A case's client process before it runs: its stage (`client[<case>]`), the
    scenario file holding only that case, its config's extra block (`upload` its
    configured upload) and its environment (the upload token, never in a file)."""

    stage: str
    scenario_file: Path
    extra: dict[str, Any]
    env: dict[str, str]


@dataclass
class _CaseRun:
    """A case's client run and what was read of it: the event server's entries of that
    run, the errors reading them (HTTP), and a recheck's contradictions of that record
    against the wire."""

    run: ClientRun
    entries: Any
    errors: list[CombinationError]
    found: list[Contradiction]


def _der_digest(pem_path: str) -> str:
    certificate = x509.load_pem_x509_certificate(Path(pem_path).read_bytes())
    return hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).hexdigest()


def _capture_pki(ctx: RunContext, directory: Path) -> dict[str, str]:
    """The capture origin's own CA and server certificate (127.0.0.1 and localhost),
    made with the run's `Authority`, apart from the event's CA: the upload's trust
    anchor is the upload block's, never the event's."""
    directory.mkdir(mode=0o700)
    authority = Authority.create("AHP Interop Capture CA")
    key, certificate = authority.issue("ahp-interop-capture", server=True)
    pem_key = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    files = {
        "ca": ("capture-ca.pem", authority.certificate.public_bytes(serialization.Encoding.PEM)),
        "cert": ("capture.pem", certificate.public_bytes(serialization.Encoding.PEM)),
        "key": ("capture-key.pem", pem_key),
    }
    paths: dict[str, str] = {}
    for role, (name, data) in files.items():
        path = directory / name
        path.write_bytes(data)
        path.chmod(0o600)
        paths[role] = str(path)
    redact_key(ctx.redactor, pem_key)
    return paths
