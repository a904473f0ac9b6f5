"""The auth suite: every server refuses every bad credential, every client every bad peer.

One combination per adapter and HTTP auth mode (client and server the same
adapter: its server is probed, its client is pointed at untrustworthy peers).
Server rows: for each trust profile the adapter declares, its core `server`
runs in the mode and the harness's raw probe client (runtime/probe.py `observe`)
sends every case of `cases.py` to each route (`POST /intercept`, `GET
/capabilities`), negatives first, then the positive controls. Client rows (strict
runs): the adapter's core `client` is pointed at the harness's recording peers
(runtime/peer.py): server certificates it must not trust, token endpoints it
must not use, and an honest peer as the control (docs/AUTH.md). A peer it must
refuse is judged by what reached it, never by what the client says.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from interop import ROOT
from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.jsonvalue import dumps_canonical, load_file
from interop.results import CombinationError, Outcome, RowVerdict, Status
from interop.runtime.client import ClientRun, run_client
from interop.runtime.context import RunContext
from interop.runtime.control import ControlError, call
from interop.runtime.peer import Peer
from interop.runtime.probe import Observation, observe
from interop.runtime.server import Server, ServerStartError
from interop.suites.auth import verify
from interop.suites.auth.cases import CASES, Material, applicable, extra_certificates
from interop.suites.base import Done, Job

PROFILES = ("strict", "compat")
OURS_ONLY = (
    "a rule of our contract only (docs/CONTRACT.md, 'Authentication and TLS'), neither the "
    "protocol's nor upstream's auth driver's: a contract v1 server is not probed on it"
)
ROUTES = ("intercept", "capabilities")
CORE = ROOT / "scenarios" / "core.json"
HTTPS_CLIENT_MODES = ("bearer", "oauth", "workload", "mtls")
# what the token endpoint of strict/token-type-not-bearer answers: a token, not a Bearer one
NOT_BEARER = json.dumps(
    {"access_token": "not-a-bearer-token", "token_type": "mac", "expires_in": 3600}
).encode()


class AuthSets(list[Path]):
    """The suite's rows are built from its case table; the one core row it sends."""

    def describe(self) -> list[dict[str, Any]]:
        return [
            {
                "name": verify.SERVER_SET,
                "file": "interop/suites/auth/cases.py",
                "sha256": "",
                "scenarios": len(server_rows()),
                "rows": server_rows(),
            },
            {
                "name": verify.CLIENT_SET,
                "file": "interop/suites/auth/suite.py",
                "sha256": "",
                "scenarios": len(CLIENT_ROWS),
                "rows": list(CLIENT_ROWS),
            },
        ]

    def row_count(self) -> int:
        return len(server_rows()) + len(CLIENT_ROWS)


def server_rows() -> list[tuple[str, Any]]:
    """Every server row id any mode can have, with its expectation, in table order."""
    rows: dict[str, Any] = {}
    for profile in PROFILES:
        for case in CASES:
            if profile not in case.profiles:
                continue
            for route in ROUTES:
                expected = (
                    verify.negative_expected(case)
                    if case.negative
                    else verify.positive_expected(route)
                )
                rows.setdefault(f"{profile}/{case.name}@{route}", expected)
    return list(rows.items())


_REFUSED = {"finished": True, "claimedDelivered": False}
CLIENT_ROWS: tuple[tuple[str, Any], ...] = (
    ("strict/positive-control", {"arrived": 1, "finished": True, "delivered": True}),
    (
        "strict/server-certificate-from-an-untrusted-ca",
        {"reached": {"the untrusted server": 0}, **_REFUSED},
    ),
    (
        "strict/server-certificate-for-another-host",
        {"reached": {"the untrusted server": 0}, **_REFUSED},
    ),
    ("strict/server-certificate-expired", {"reached": {"the untrusted server": 0}, **_REFUSED}),
    (
        "strict/token-endpoint-redirects",
        {"reached": {"the redirect target": 0, "the event server": 0}, **_REFUSED},
    ),
    ("strict/token-type-not-bearer", {"reached": {"the event server": 0}, **_REFUSED}),
    (
        "strict/token-endpoint-plain-http",
        {"reached": {"the plain-HTTP token endpoint": 0, "the event server": 0}, **_REFUSED},
    ),
)


class AuthSuite:
    name = "auth"

    def load_sets(self, paths: list[Path]) -> AuthSets:
        return AuthSets(paths[:1])

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        if combination.transport != "http":
            return "the auth suite probes HTTP listeners (stdio relies on process trust)"
        if combination.client != combination.server:
            return (
                "the auth suite judges each adapter on its own (its server by probes, its "
                "client against the harness's peers): one combination per adapter and mode"
            )
        return None

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return sorted(
            (Job([c], adapters[c.server].weight) for c in combinations), key=lambda j: -j.cost
        )

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: AuthSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        combination = job.combinations[0]
        outcome = Outcome(self.name, combination)
        started = time.monotonic()
        adapter = adapters[combination.server]
        scenario = _first_row(sets[0] if sets else CORE)
        home = ctx.unique(f"auth-{adapter.name}-{combination.auth}")
        row_file = home / "one-row.json"
        row_file.write_text(dumps_canonical({"version": 1, "scenarios": [scenario]}))
        for profile in PROFILES:
            if ctx.cancelled.is_set():
                outcome.errors.append(CombinationError("run", "Cancelled", "interrupted"))
                break
            if profile not in adapter.profiles:
                mode_cases = applicable(
                    combination.auth, profile, _https(combination.auth, profile)
                )
                # our strict profile is not contract v1's: inapplicable to a v1 server
                v1 = not adapter.blind and profile == "strict"
                outcome.rows += [
                    RowVerdict(
                        verify.SERVER_SET,
                        f"{profile}/{c.name}@{r}",
                        Status.INAPPLICABLE if v1 else Status.UNSUPPORTED,
                        error=(
                            f"{adapter.name} follows contract v1, whose trust wire is compat"
                            if v1
                            else f"{adapter.name} does not declare the {profile} profile"
                        ),
                    )
                    for c in mode_cases
                    for r in ROUTES
                ]
                continue
            outcome.rows += self._server_rows(
                ctx, adapter, combination, profile, row_file, scenario
            )
        if ctx.profile == "strict" and not ctx.cancelled.is_set():
            outcome.rows += self._client_rows(
                ctx, adapters[combination.client], combination, row_file, scenario
            )
        outcome.seconds = time.monotonic() - started
        if done is not None:
            done(outcome)
        return [outcome]

    # ------------------------------------------------------------- server rows

    def _server_rows(
        self,
        ctx: RunContext,
        adapter: Adapter,
        combination: Combination,
        profile: str,
        row_file: Path,
        scenario: dict[str, Any],
    ) -> list[RowVerdict]:
        mode = combination.auth
        server = Server(ctx, adapter, "http", mode, row_file, profile=profile)
        material = Material(ctx.trust, mode, profile)
        cases = applicable(mode, profile, material.https)
        try:
            server.start()
        except ServerStartError as exc:
            return [
                RowVerdict(
                    verify.SERVER_SET,
                    f"{profile}/{c.name}@{r}",
                    Status.FAILED,
                    error=f"{exc.error_class}: {exc}",
                )
                for c in cases
                for r in ROUTES
            ]
        rows: list[RowVerdict] = []
        try:
            if mode == "mtls":
                material.files = extra_certificates(ctx.trust)
            request_body = json.dumps(scenario["request"]).encode()
            for case in cases:
                if case.ours and not adapter.blind:
                    rows += [
                        RowVerdict(
                            verify.SERVER_SET,
                            f"{profile}/{case.name}@{route}",
                            Status.UNSUPPORTED,
                            error=OURS_ONLY,
                        )
                        for route in ROUTES
                    ]
                    continue
                for route in ROUTES:
                    row_id = f"{profile}/{case.name}@{route}"
                    built = case.build(material)
                    path, method, body = _route(server.endpoint, route, built.query, request_body)
                    headers = list(built.headers)
                    if method == "POST":
                        headers.append(("Content-Type", "application/json"))
                    before = _receipts(server)
                    seen = observe(
                        server.endpoint,
                        method=method,
                        path=path,
                        headers=headers,
                        body=body,
                        tls=built.tls,
                        plain=built.plain,
                    )
                    healthy = _healthy(server)
                    after = _receipts(server)
                    if case.negative:
                        row = verify.judge_negative(row_id, case, seen, healthy, after != before)
                    else:
                        row = verify.judge_positive(
                            row_id,
                            route,
                            seen,
                            response=scenario["response"],
                            receipt_delta=_served(after) - _served(before),
                            healthy=healthy,
                        )
                    row.actual = {"sent": _sent(method, path, headers, built), **row.actual}
                    rows.append(row)
        finally:
            server.stop()
            ctx.keep_log(server.log, f"{combination.key}/server-{profile}.log")
        return rows

    # ------------------------------------------------------------- client rows

    def _client_rows(
        self,
        ctx: RunContext,
        client: Adapter,
        combination: Combination,
        row_file: Path,
        scenario: dict[str, Any],
    ) -> list[RowVerdict]:
        mode = combination.auth
        trust = ctx.trust
        answer = json.dumps(scenario["response"]).encode()
        good = (trust.path("server.pem"), trust.path("server-key.pem"))
        https = mode != "none"
        client_ca = trust.path("ca.pem") if mode == "mtls" else None
        rows: list[RowVerdict] = []
        sid = scenario["id"]

        def run(endpoint: str, name: str, extra: dict[str, Any] | None = None) -> ClientRun:
            result = run_client(
                ctx,
                client,
                stage=f"client[{name}]",
                scenario_file=row_file,
                transport="http",
                auth=mode,
                endpoint=endpoint,
                extra=extra,
            )
            ctx.keep_log(result.log, f"{combination.key}/client-{name}.log")
            return result

        with Peer(answer, cert=good if https else None, client_ca=client_ca) as honest:
            result = run(honest.url("/intercept"), "positive-control")
            rows.append(
                verify.judge_client_control(
                    "strict/positive-control",
                    arrived=len(honest.seen),
                    finished=_finished(result),
                    delivered=_delivered(result, sid),
                )
            )
        if mode in HTTPS_CLIENT_MODES:
            for name, options in (
                ("server-certificate-from-an-untrusted-ca", {"untrusted": True}),
                ("server-certificate-for-another-host", {"names": ("example.invalid",)}),
                ("server-certificate-expired", {"expired": True}),
            ):
                cert = trust.leaf_files(f"bad-{name}", server=True, **options)
                with Peer(answer, cert=cert) as peer:
                    result = run(peer.url("/intercept"), name)
                    rows.append(
                        verify.judge_refusal(
                            f"strict/{name}",
                            reached={"the untrusted server": len(peer.seen)},
                            finished=_finished(result),
                            claimed=_delivered(result, sid),
                        )
                    )
        if mode == "oauth":
            rows += self._token_rows(ctx, run, answer, good, sid)
        return rows

    def _token_rows(
        self,
        ctx: RunContext,
        run: Callable[[str, str, dict[str, Any] | None], ClientRun],
        answer: bytes,
        good: tuple[str, str],
        sid: str,
    ) -> list[RowVerdict]:
        rows = []
        auth, tls = ctx.trust.client_auth("oauth", "strict")
        token = json.dumps(
            {
                "access_token": ctx.trust.token("oauth", "strict"),
                "token_type": "Bearer",
                "expires_in": 3600,
            }
        ).encode()
        with Peer(answer, cert=good) as event:
            with (
                Peer(token, cert=good) as target,
                Peer(redirect=target.url("/token"), cert=good) as redirecting,
            ):
                result = run(
                    event.url("/intercept"),
                    "token-endpoint-redirects",
                    {"auth": {**auth, "tokenEndpoint": redirecting.url("/token")}, "tls": tls},
                )
                rows.append(
                    verify.judge_refusal(
                        "strict/token-endpoint-redirects",
                        reached={
                            "the redirect target": len(target.seen),
                            "the event server": len(event.seen),
                        },
                        finished=_finished(result),
                        claimed=_delivered(result, sid),
                    )
                )
            with Peer(NOT_BEARER, cert=good) as odd:
                result = run(
                    event.url("/intercept"),
                    "token-type-not-bearer",
                    {"auth": {**auth, "tokenEndpoint": odd.url("/token")}, "tls": tls},
                )
                rows.append(
                    verify.judge_refusal(
                        "strict/token-type-not-bearer",
                        reached={"the event server": len(event.seen)},
                        finished=_finished(result),
                        claimed=_delivered(result, sid),
                    )
                )
            with Peer(token) as plain:
                result = run(
                    event.url("/intercept"),
                    "token-endpoint-plain-http",
                    {"auth": {**auth, "tokenEndpoint": plain.url("/token")}, "tls": tls},
                )
                rows.append(
                    verify.judge_refusal(
                        "strict/token-endpoint-plain-http",
                        reached={
                            "the plain-HTTP token endpoint": len(plain.seen),
                            "the event server": len(event.seen),
                        },
                        finished=_finished(result),
                        claimed=_delivered(result, sid),
                    )
                )
        return rows


def _https(mode: str, profile: str) -> bool:
    return mode == "mtls" or (profile == "strict" and mode != "none")


def _first_row(path: Path) -> dict[str, Any]:
    document = load_file(path)
    row: dict[str, Any] = document["scenarios"][0]
    return row


def _route(endpoint: str, route: str, query: str, body: bytes) -> tuple[str, str, bytes]:
    path = urlsplit(endpoint).path or "/"
    if route == "capabilities":
        base = path.removesuffix("/intercept")
        path, method, body = base.rstrip("/") + "/capabilities", "GET", b""
    else:
        method = "POST"
    return (f"{path}?{query}" if query else path), method, body


def _sent(method: str, path: str, headers: list[tuple[str, str]], built: Any) -> dict[str, Any]:
    """What a probe sent, without a credential's value: the request line (the query's
    names only), header names in order, the TLS options."""
    target, _, query = path.partition("?")
    if query:
        target += "?" + "&".join(f"{part.split('=', 1)[0]}=..." for part in query.split("&"))
    sent: dict[str, Any] = {"request": f"{method} {target}", "headers": [n for n, _ in headers]}
    if built.plain:
        sent["tls"] = "none (plain HTTP to the TLS port)"
    elif built.tls is not None:
        certificate = Path(built.tls.cert_file).name if built.tls.cert_file else "no certificate"
        # a leaf made for the run is `name-N.pem`, N in the order combinations asked for
        # one: the report names it without N, so the same inputs give the same report
        certificate = re.sub(r"-\d+(?=\.pem$)", "", certificate)
        sent["tls"] = f"TLS {built.tls.version or 'any'}, client {certificate}"
    return sent


def _receipts(server: Server) -> Any:
    """Everything the server recorded (`GET /receipts`): requests, discovery, notifications."""
    try:
        return call(server.control, "GET", "/receipts")
    except ControlError as exc:
        return {"unavailable": str(exc)}


def _served(receipts: Any) -> int:
    requests = receipts.get("requests") if isinstance(receipts, dict) else None
    return len(requests) if isinstance(requests, list) else -1


def _healthy(server: Server) -> bool:
    try:
        answer = call(server.control, "GET", "/health", timeout=5)
    except ControlError:
        return False
    return isinstance(answer, dict) and answer.get("ready") is True


def _finished(result: ClientRun) -> bool:
    return result.exit_code is not None


def _delivered(result: ClientRun, sid: str) -> bool:
    """Whether the client's report says the row's request was delivered and applied."""
    report = result.report if isinstance(result.report, dict) else {}
    for entry in report.get("results", []) if isinstance(report.get("results"), list) else []:
        if isinstance(entry, dict) and entry.get("id") == sid:
            return entry.get("status") in ("completed", "passed")
    return False


__all__ = ["AuthSuite", "Observation"]
