"""Registration rows of the catalogue set: docs/CATALOGUE.md "Registration".

Every document is evaluated against the catalogue manifest M of that page:
31 events (all but hook.failure), all with `observe`; `tool.before` (effects
deny allow ask modify message flow; modify input replace+merge; flow stop),
`tool.after` (effects modify message; modify output replace only) and
`turn.start` (effects deny message) also with `intercept`; transports
["http"]; authentication ["bearer"]; limits 100..30000 ms; managed policy
scopes ["user", "project"], disableable true (so no subscription can be made
non-disableable: `disableable: false` is a mandatory policy M cannot enforce).

Each row is tagged with the rule its verdict is about. A rejected row's
expectation names that rule, which is, by hand, the FIRST rule of the table
that fails; the comment above each row says which rules the document passes
and why the named one fails (an `order:` comment marks documents that fail a
later rule too, to pin the order). An accepted row exercises the same rule's
boundary and passes every rule.
"""

from __future__ import annotations

from typing import Any

from catalogue_wire import (
    ACCEPTED,
    JSON,
    PROTOCOL,
    Row,
    context,
    register,
    rejected,
    row,
)

ALPHA = "org.ahp-interop.catalogue.alpha"
BETA = "org.ahp-interop.catalogue.beta"
URL = "https://alpha.catalogue.ahp-interop.test/hooks"
BETA_URL = "https://beta.catalogue.ahp-interop.test/hooks"
TOKEN_ENV = "AHP_INTEROP_CATALOGUE_TOKEN"
TOKEN = "TEST-ONLY-catalogue-bearer"


def intercept(*events: str, timeout: int = 2500, **extra: Any) -> JSON:
    return {
        "events": list(events),
        "mode": "intercept",
        "timeoutMs": timeout,
        "failurePolicy": "fail-closed",
        "content": {"default": "metadata"},
        **extra,
    }


def observe(*events: str, **extra: Any) -> JSON:
    return {"events": list(events), "mode": "observe", "content": {"default": "omit"}, **extra}


def http(url: str = URL) -> JSON:
    return {"type": "http", "url": url}


def backend(
    bid: str, *subscriptions: JSON, transport: JSON | None = None, auth: JSON = None
) -> JSON:
    out: dict[str, Any] = {"id": bid, "transport": transport or http()}
    if auth is not None:
        out["authentication"] = auth
    out["subscriptions"] = list(subscriptions)
    return out


def document(*backends: JSON) -> JSON:
    return {"protocolVersion": PROTOCOL, "hooks": list(backends)}


def bearer(env: str = TOKEN_ENV) -> JSON:
    return {"type": "bearer", "tokenEnv": env}


def need(event: str, mode: str, *effects: str, modify: JSON = None) -> JSON:
    out: dict[str, Any] = {"event": event, "mode": mode, "effects": list(effects)}
    if modify is not None:
        out["modify"] = modify
    return out


STDIO: JSON = {"type": "stdio", "command": "catalogue-hook", "lifecycle": "persistent"}
OAUTH: JSON = {
    "type": "oauth",
    "resource": "https://alpha.catalogue.ahp-interop.test/",
    "issuer": "https://issuer.catalogue.ahp-interop.test",
    "clientId": "cat-client-0001",
    "flow": "client_credentials",
}
ENV = {TOKEN_ENV: TOKEN}


def R(
    tag: str,
    sid: str,
    registration: JSON,
    verdict: JSON,
    requirements: list[JSON] | None = None,
    ctx: JSON | None = None,
) -> Row:
    return row(
        tag,
        sid,
        "registration",
        [register(registration, requirements, ctx)],
        sent=[],
        deliveries=[],
        registrations=[verdict],
    )


def schema_rows() -> list[Row]:
    out = []
    sub = intercept("tool.before")
    no_policy = {k: v for k, v in sub.items() if k != "failurePolicy"}
    out.append(
        R(
            "schema",
            "cat-reg-schema-intercept-without-failure-policy",
            document(backend(ALPHA, no_policy)),
            rejected("schema"),
        )
    )
    no_timeout = {k: v for k, v in sub.items() if k != "timeoutMs"}
    out.append(
        R(
            "schema",
            "cat-reg-schema-intercept-without-timeout",
            document(backend(ALPHA, no_timeout)),
            rejected("schema"),
        )
    )
    out.append(
        R(
            "schema",
            "cat-reg-schema-observer-with-failure-policy",
            document(backend(ALPHA, observe("tool.after", failurePolicy="fail-open"))),
            rejected("schema"),
        )
    )
    out.append(
        R(
            "schema",
            "cat-reg-schema-observer-with-timeout",
            document(backend(ALPHA, observe("tool.after", timeoutMs=1000))),
            rejected("schema"),
        )
    )
    no_default = {**observe("session.start"), "content": {"text": "body"}}
    out.append(
        R(
            "schema",
            "cat-reg-schema-content-without-default",
            document(backend(ALPHA, no_default)),
            rejected("schema"),
        )
    )
    # session.end is observe-only in the protocol: not an interceptable name.
    out.append(
        R(
            "schema",
            "cat-reg-schema-observe-only-event-intercepted",
            document(backend(ALPHA, intercept("session.end"))),
            rejected("schema"),
        )
    )
    mtls = {
        "type": "mtls",
        "certificateRef": "cat-cert",
        "privateKeyRef": "cat-key",
        "trustRootsRef": "cat-roots",
    }
    out.append(
        R(
            "schema",
            "cat-reg-schema-mtls-authentication",
            document(backend(ALPHA, observe("tool.after"), auth=mtls)),
            rejected("schema"),
        )
    )
    workload = {
        "type": "workload",
        "credentialRef": "cat-workload",
        "issuer": "https://issuer.catalogue.ahp-interop.test",
        "audience": "catalogue",
        "profile": "spiffe",
    }
    out.append(
        R(
            "schema",
            "cat-reg-schema-workload-authentication",
            document(backend(ALPHA, observe("tool.after"), auth=workload)),
            rejected("schema"),
        )
    )
    literal = {"type": "bearer", "token": TOKEN}
    out.append(
        R(
            "schema",
            "cat-reg-schema-literal-token",
            document(backend(ALPHA, observe("tool.after"), auth=literal)),
            rejected("schema"),
            ctx=context(environment=ENV),
        )
    )
    both = {"type": "bearer", "tokenEnv": TOKEN_ENV, "tokenRef": "cat-vault-alpha"}
    out.append(
        R(
            "schema",
            "cat-reg-schema-bearer-env-and-ref",
            document(backend(ALPHA, observe("tool.after"), auth=both)),
            rejected("schema"),
            ctx=context(environment=ENV),
        )
    )
    out.append(
        R(
            "schema",
            "cat-reg-schema-managed-without-disableable",
            document(backend(ALPHA, intercept("tool.before", scope="managed"))),
            rejected("schema"),
        )
    )
    # order: a stdio backend with authentication is schema-invalid before its transport
    # is checked against M.transports.
    out.append(
        R(
            "schema",
            "cat-reg-schema-stdio-with-authentication",
            document(backend(ALPHA, observe("tool.after"), transport=STDIO, auth=bearer())),
            rejected("schema"),
            ctx=context(environment=ENV),
        )
    )
    # timeoutMs 0 is below the schema's minimum 1 (1 itself is schema-valid: see timeout).
    out.append(
        R(
            "schema",
            "cat-reg-schema-timeout-zero",
            document(backend(ALPHA, intercept("tool.before", timeout=0))),
            rejected("schema"),
        )
    )
    # Wildcards are `*` or `family.*` with a lower-case family.
    out.append(
        R(
            "schema",
            "cat-reg-schema-suffix-wildcard",
            document(backend(ALPHA, observe("*.after"))),
            rejected("schema"),
        )
    )
    # order: a backend id that is not reverse-DNS, shared by two backends.
    out.append(
        R(
            "schema",
            "cat-reg-schema-backend-id-not-reverse-dns",
            document(
                backend("catalogue", observe("tool.after")),
                backend("catalogue", observe("tool.before")),
            ),
            rejected("schema"),
        )
    )

    # Accepted: an observer with every optional field the schema allows it, and an
    # intercept subscription with its own; both backends plain http.
    rich_observer = observe(
        "session.start",
        "session.end",
        id="cat-sub-observer",
        includeNative=False,
        filters={"toolKinds": ["shell"], "paths": ["native"]},
        scope="user",
        disableable=True,
    )
    rich_observer["content"] = {"default": "omit", "text": "body", "reasoning": "omit"}
    rich_intercept = intercept(
        "tool.before",
        id="cat-sub-intercept",
        includeNative=True,
        filters={"toolKinds": ["shell", "file_write"]},
        scope="project",
        disableable=True,
    )
    out.append(
        R(
            "schema",
            "cat-reg-schema-every-optional-field",
            document(backend(ALPHA, rich_observer, rich_intercept)),
            ACCEPTED,
        )
    )
    out.append(
        R(
            "schema",
            "cat-reg-schema-fail-open-intercept",
            document(backend(ALPHA, {**intercept("turn.start"), "failurePolicy": "fail-open"})),
            ACCEPTED,
        )
    )
    return out


def duplicate_rows() -> list[Row]:
    return [
        R(
            "duplicate-backend",
            "cat-reg-duplicate-backend",
            document(backend(ALPHA, observe("tool.after")), backend(ALPHA, observe("tool.before"))),
            rejected("duplicate-backend"),
        ),
        # order: the second backend is stdio too (transport), the duplicate comes first.
        R(
            "duplicate-backend",
            "cat-reg-duplicate-backend-before-transport",
            document(
                backend(BETA, observe("tool.after")),
                backend(BETA, observe("tool.after"), transport=STDIO),
            ),
            rejected("duplicate-backend"),
        ),
        # Distinct ids (one a prefix of the other) sharing a URL: accepted.
        R(
            "duplicate-backend",
            "cat-reg-distinct-backends-one-url",
            document(
                backend(ALPHA, observe("tool.after")),
                backend(ALPHA + ".second", observe("tool.before")),
            ),
            ACCEPTED,
        ),
    ]


def transport_rows() -> list[Row]:
    per_event = {
        "type": "stdio",
        "command": "catalogue-hook",
        "args": ["--once"],
        "lifecycle": "per_event",
        "cwd": "/srv/hooks",
    }
    return [
        R(
            "transport",
            "cat-reg-transport-stdio",
            document(backend(ALPHA, observe("tool.after"), transport=STDIO)),
            rejected("transport"),
        ),
        # One http backend, then a per_event stdio one.
        R(
            "transport",
            "cat-reg-transport-second-backend-stdio",
            document(
                backend(ALPHA, observe("tool.after")),
                backend(BETA, intercept("tool.before"), transport=per_event),
            ),
            rejected("transport"),
        ),
        # order: the first backend fails authentication (oauth), the second transport;
        # transport is the earlier rule.
        R(
            "transport",
            "cat-reg-transport-before-authentication",
            document(
                backend(ALPHA, observe("tool.after"), auth=OAUTH),
                backend(BETA, observe("tool.before"), transport=STDIO),
            ),
            rejected("transport"),
        ),
        # http on a loopback address is still transport http.
        R(
            "transport",
            "cat-reg-transport-loopback-http",
            document(
                backend(ALPHA, observe("tool.after"), transport=http("http://127.0.0.1:7410/ahp"))
            ),
            ACCEPTED,
        ),
    ]


def authentication_rows() -> list[Row]:
    return [
        R(
            "authentication",
            "cat-reg-authentication-oauth",
            document(backend(ALPHA, observe("tool.after"), auth=OAUTH)),
            rejected("authentication"),
        ),
        # order: oauth with a flow and scopes, and a bearer backend whose token is
        # missing (credential): authentication is the earlier rule.
        R(
            "authentication",
            "cat-reg-authentication-before-credential",
            document(
                backend(ALPHA, observe("tool.after"), auth=bearer("AHP_INTEROP_UNSET_TOKEN")),
                backend(
                    BETA,
                    observe("tool.before"),
                    transport=http(BETA_URL),
                    auth={**OAUTH, "flow": "authorization_code_pkce", "scopes": ["hooks.read"]},
                ),
            ),
            rejected("authentication"),
        ),
        R(
            "authentication",
            "cat-reg-authentication-bearer",
            document(backend(ALPHA, intercept("tool.before"), auth=bearer())),
            ACCEPTED,
            ctx=context(environment=ENV),
        ),
        # A backend without authentication is not checked by it.
        R(
            "authentication",
            "cat-reg-authentication-absent",
            document(
                backend(ALPHA, observe("tool.after")),
                backend(BETA, observe("tool.after"), transport=http(BETA_URL), auth=bearer()),
            ),
            ACCEPTED,
            ctx=context(environment=ENV),
        ),
    ]


def credential_rows() -> list[Row]:
    return [
        R(
            "credential",
            "cat-reg-credential-unset",
            document(backend(ALPHA, observe("tool.after"), auth=bearer())),
            rejected("credential"),
        ),
        R(
            "credential",
            "cat-reg-credential-empty",
            document(backend(ALPHA, observe("tool.after"), auth=bearer())),
            rejected("credential"),
            ctx=context(environment={TOKEN_ENV: ""}),
        ),
        # Environment keys are matched exactly.
        R(
            "credential",
            "cat-reg-credential-other-case",
            document(backend(ALPHA, observe("tool.after"), auth=bearer())),
            rejected("credential"),
            ctx=context(environment={TOKEN_ENV.lower(): TOKEN}),
        ),
        # No reference store in this suite.
        R(
            "credential",
            "cat-reg-credential-token-ref",
            document(
                backend(
                    ALPHA,
                    observe("tool.after"),
                    auth={"type": "bearer", "tokenRef": "cat-vault-alpha"},
                )
            ),
            rejected("credential"),
            ctx=context(environment=ENV),
        ),
        # order: the second bearer backend's variable is unset and an observer names
        # hook.failure (event): credential is the earlier rule.
        R(
            "credential",
            "cat-reg-credential-before-event",
            document(
                backend(ALPHA, observe("tool.after"), auth=bearer()),
                backend(
                    BETA,
                    observe("hook.failure"),
                    transport=http(BETA_URL),
                    auth=bearer("AHP_INTEROP_SECOND_TOKEN"),
                ),
            ),
            rejected("credential"),
            ctx=context(environment=ENV),
        ),
        R(
            "credential",
            "cat-reg-credential-resolved",
            document(
                backend(ALPHA, observe("tool.after"), auth=bearer()),
                backend(
                    BETA,
                    intercept("turn.start"),
                    transport=http(BETA_URL),
                    auth=bearer("AHP_INTEROP_SECOND_TOKEN"),
                ),
            ),
            ACCEPTED,
            ctx=context(environment={**ENV, "AHP_INTEROP_SECOND_TOKEN": "TEST-ONLY-second"}),
        ),
        # A one-space value is a non-empty string.
        R(
            "credential",
            "cat-reg-credential-one-space",
            document(backend(ALPHA, observe("tool.after"), auth=bearer())),
            ACCEPTED,
            ctx=context(environment={TOKEN_ENV: " "}),
        ),
    ]


def event_rows() -> list[Row]:
    return [
        # No model.* event is interceptable in M.
        R(
            "event",
            "cat-reg-event-model-wildcard-intercept",
            document(backend(ALPHA, intercept("model.*"))),
            rejected("event"),
        ),
        R(
            "event",
            "cat-reg-event-hook-failure-observed",
            document(backend(ALPHA, observe("tool.after", "hook.failure"))),
            rejected("event"),
        ),
        # Interceptable in the protocol (schema-valid), observe-only in M.
        R(
            "event",
            "cat-reg-event-observe-only-in-manifest",
            document(backend(ALPHA, intercept("turn.finish.before"))),
            rejected("event"),
        ),
        # hook.* matches no event of M (hook.failure is not in M.events).
        R(
            "event",
            "cat-reg-event-wildcard-matches-nothing",
            document(backend(ALPHA, observe("hook.*"))),
            rejected("event"),
        ),
        # order: also scope managed (scope): event is the earlier rule.
        R(
            "event",
            "cat-reg-event-before-scope",
            document(backend(ALPHA, intercept("model.*", scope="managed", disableable=False))),
            rejected("event"),
        ),
        R(
            "event",
            "cat-reg-event-tool-wildcard-intercept",
            document(backend(ALPHA, intercept("tool.*"))),
            ACCEPTED,
        ),
        R(
            "event",
            "cat-reg-event-everything-observed",
            document(backend(ALPHA, observe("*"))),
            ACCEPTED,
        ),
        R(
            "event",
            "cat-reg-event-star-intercept",
            document(backend(ALPHA, intercept("*"))),
            ACCEPTED,
        ),
        R(
            "event",
            "cat-reg-event-family-observed",
            document(backend(ALPHA, observe("user.*", "workspace.change.after"))),
            ACCEPTED,
        ),
        R(
            "event",
            "cat-reg-event-turn-start-intercept",
            document(backend(ALPHA, intercept("turn.start"))),
            ACCEPTED,
        ),
    ]


def scope_rows() -> list[Row]:
    return [
        R(
            "scope",
            "cat-reg-scope-managed-intercept",
            document(backend(ALPHA, intercept("tool.before", scope="managed", disableable=False))),
            rejected("scope"),
        ),
        R(
            "scope",
            "cat-reg-scope-managed-observer",
            document(backend(ALPHA, observe("tool.after", scope="managed", disableable=False))),
            rejected("scope"),
        ),
        # order: also timeoutMs 30001 (timeout): scope is the earlier rule.
        R(
            "scope",
            "cat-reg-scope-before-timeout",
            document(
                backend(
                    ALPHA,
                    intercept("tool.before", timeout=30001, scope="managed", disableable=False),
                )
            ),
            rejected("scope"),
        ),
        R(
            "scope",
            "cat-reg-scope-project",
            document(backend(ALPHA, intercept("tool.before", scope="project"))),
            ACCEPTED,
        ),
        R(
            "scope",
            "cat-reg-scope-user",
            document(backend(ALPHA, observe("tool.after", scope="user", disableable=True))),
            ACCEPTED,
        ),
        # M.managedPolicy.disableable is true: the harness lets its user disable hooks,
        # so a subscription that must not be disabled is a mandatory policy it cannot
        # enforce (capability-auth.md: fail unsupported mandatory policy rather than
        # silently degrade). Scope user itself is in M.managedPolicy.scopes.
        R(
            "scope",
            "cat-reg-scope-not-disableable",
            document(backend(ALPHA, observe("tool.after", scope="user", disableable=False))),
            rejected("scope"),
        ),
        # The same without a scope: disableable false alone is the mandatory policy.
        R(
            "scope",
            "cat-reg-scope-not-disableable-without-scope",
            document(backend(ALPHA, intercept("tool.before", disableable=False))),
            rejected("scope"),
        ),
    ]


def timeout_rows() -> list[Row]:
    return [
        R(
            "timeout",
            "cat-reg-timeout-99",
            document(backend(ALPHA, intercept("tool.before", timeout=99))),
            rejected("timeout"),
        ),
        R(
            "timeout",
            "cat-reg-timeout-30001",
            document(backend(ALPHA, intercept("tool.after", timeout=30001))),
            rejected("timeout"),
        ),
        # Schema-valid (minimum 1), below M's 100.
        R(
            "timeout",
            "cat-reg-timeout-1",
            document(backend(ALPHA, intercept("turn.start", timeout=1))),
            rejected("timeout"),
        ),
        # One of two subscriptions out of range.
        R(
            "timeout",
            "cat-reg-timeout-second-subscription",
            document(
                backend(
                    ALPHA,
                    intercept("tool.before", timeout=100),
                    intercept("tool.after", timeout=45000),
                )
            ),
            rejected("timeout"),
        ),
        # order: also a requirement no subscription covers (requirement): timeout first.
        R(
            "timeout",
            "cat-reg-timeout-before-requirement",
            document(backend(ALPHA, intercept("tool.before", timeout=99))),
            rejected("timeout"),
            requirements=[need("turn.start", "intercept", "deny")],
        ),
        R(
            "timeout",
            "cat-reg-timeout-100",
            document(backend(ALPHA, intercept("tool.before", timeout=100))),
            ACCEPTED,
        ),
        R(
            "timeout",
            "cat-reg-timeout-30000",
            document(backend(ALPHA, intercept("tool.after", timeout=30000))),
            ACCEPTED,
        ),
    ]


def requirement_rows() -> list[Row]:
    both = {"replace": True, "merge": True}
    return [
        # tool.before is only observed: no intercept subscription covers it.
        R(
            "requirement",
            "cat-reg-requirement-mode-uncovered",
            document(backend(ALPHA, observe("tool.before"))),
            rejected("requirement"),
            requirements=[need("tool.before", "intercept", "deny")],
        ),
        # Subscribed to tool.after, the requirement is about tool.before.
        R(
            "requirement",
            "cat-reg-requirement-event-uncovered",
            document(backend(ALPHA, intercept("tool.after"))),
            rejected("requirement"),
            requirements=[need("tool.before", "intercept", "deny")],
        ),
        # tool.after modify output: M has merge false.
        R(
            "requirement",
            "cat-reg-requirement-output-merge",
            document(backend(ALPHA, intercept("tool.after"))),
            rejected("requirement"),
            requirements=[
                need("tool.after", "intercept", "modify", modify={"output": {"merge": True}})
            ],
        ),
        R(
            "requirement",
            "cat-reg-requirement-effect-not-advertised",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("requirement"),
            requirements=[need("tool.before", "intercept", "inject")],
        ),
        R(
            "requirement",
            "cat-reg-requirement-modify-target",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("requirement"),
            requirements=[
                need("tool.before", "intercept", "modify", modify={"output": {"replace": True}})
            ],
        ),
        # A modify target whose operations block is not an object (here `true` for
        # input, a target tool.before offers with replace and merge): not a
        # requirement that can be covered (docs/CATALOGUE.md, Readings).
        R(
            "requirement",
            "cat-reg-requirement-modify-operations-not-an-object",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("requirement"),
            requirements=[need("tool.before", "intercept", "modify", modify={"input": True})],
        ),
        # `*` covers turn.finish.before by pattern, but M does not list it with intercept.
        R(
            "requirement",
            "cat-reg-requirement-not-interceptable-in-manifest",
            document(backend(ALPHA, intercept("*"))),
            rejected("requirement"),
            requirements=[need("turn.finish.before", "intercept")],
        ),
        # `*` observes hook.failure by pattern; M does not list hook.failure.
        R(
            "requirement",
            "cat-reg-requirement-hook-failure-not-listed",
            document(backend(ALPHA, observe("*"))),
            rejected("requirement"),
            requirements=[need("hook.failure", "observe")],
        ),
        # effects that is not a list (here the string "ask", which is an effect tool.before
        # offers): not a requirement that can be covered (docs/CATALOGUE.md, Readings).
        R(
            "requirement",
            "cat-reg-requirement-effects-not-a-list",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("requirement"),
            requirements=[{"event": "tool.before", "mode": "intercept", "effects": "ask"}],
            ctx=context(interactive=True),
        ),
        R(
            "requirement",
            "cat-reg-requirement-observe-with-effects",
            document(backend(ALPHA, observe("session.end"))),
            rejected("requirement"),
            requirements=[need("session.end", "observe", "message")],
        ),
        # order: ask at tool.after, not interactive: ask is not among tool.after's effects
        # (requirement), which comes before interactive.
        R(
            "requirement",
            "cat-reg-requirement-before-interactive",
            document(backend(ALPHA, intercept("tool.after"))),
            rejected("requirement"),
            requirements=[need("tool.after", "intercept", "ask")],
        ),
        # The second of two requirements fails.
        R(
            "requirement",
            "cat-reg-requirement-second-of-two",
            document(backend(ALPHA, intercept("tool.before", "turn.start"))),
            rejected("requirement"),
            requirements=[
                need("tool.before", "intercept", "deny"),
                need("turn.start", "intercept", "modify", modify={"prompt": {"replace": True}}),
            ],
        ),
        # Accepted: output replace true with merge false (only operations set true count).
        R(
            "requirement",
            "cat-reg-requirement-output-replace",
            document(backend(ALPHA, intercept("tool.after"))),
            ACCEPTED,
            requirements=[
                need(
                    "tool.after",
                    "intercept",
                    "modify",
                    "message",
                    modify={"output": {"replace": True, "merge": False}},
                )
            ],
        ),
        # Covered by a wildcard subscription; input replace and merge are both true in M.
        R(
            "requirement",
            "cat-reg-requirement-wildcard-covers",
            document(backend(ALPHA, intercept("tool.*"))),
            ACCEPTED,
            requirements=[
                need("tool.before", "intercept", "modify", "deny", "flow", modify={"input": both}),
                need("tool.after", "intercept", "message"),
            ],
        ),
        R(
            "requirement",
            "cat-reg-requirement-observe-no-effects",
            document(backend(ALPHA, observe("session.*"))),
            ACCEPTED,
            requirements=[need("session.end", "observe")],
        ),
        # Covered by a subscription of the second backend.
        R(
            "requirement",
            "cat-reg-requirement-other-backend",
            document(
                backend(ALPHA, observe("tool.after")),
                backend(BETA, intercept("turn.start"), transport=http(BETA_URL)),
            ),
            ACCEPTED,
            requirements=[need("turn.start", "intercept", "deny", "message")],
        ),
    ]


def interactive_rows() -> list[Row]:
    return [
        R(
            "interactive",
            "cat-reg-interactive-ask",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("interactive"),
            requirements=[need("tool.before", "intercept", "ask")],
            ctx=context(interactive=False),
        ),
        R(
            "interactive",
            "cat-reg-interactive-ask-among-others",
            document(backend(ALPHA, intercept("tool.before"))),
            rejected("interactive"),
            requirements=[need("tool.before", "intercept", "deny", "ask", "message")],
            ctx=context(interactive=False),
        ),
        R(
            "interactive",
            "cat-reg-interactive-ask-accepted",
            document(backend(ALPHA, intercept("tool.before"))),
            ACCEPTED,
            requirements=[need("tool.before", "intercept", "ask")],
            ctx=context(interactive=True),
        ),
        R(
            "interactive",
            "cat-reg-interactive-no-ask",
            document(backend(ALPHA, intercept("tool.before"))),
            ACCEPTED,
            requirements=[need("tool.before", "intercept", "allow", "deny")],
            ctx=context(interactive=False),
        ),
    ]


def two_step_rows() -> list[Row]:
    """Two documents in one row: one entry per register step, in order."""
    good = document(backend(ALPHA, intercept("tool.before")))
    bad = document(backend(ALPHA, intercept("tool.before", timeout=30001)))
    return [
        row(
            ("timeout", "timeout"),
            "cat-reg-two-documents",
            "registration",
            [register(good), register(bad)],
            sent=[],
            deliveries=[],
            registrations=[ACCEPTED, rejected("timeout")],
        )
    ]


def rows() -> list[Row]:
    return [
        *schema_rows(),
        *duplicate_rows(),
        *transport_rows(),
        *authentication_rows(),
        *credential_rows(),
        *event_rows(),
        *scope_rows(),
        *timeout_rows(),
        *requirement_rows(),
        *interactive_rows(),
        *two_step_rows(),
    ]
