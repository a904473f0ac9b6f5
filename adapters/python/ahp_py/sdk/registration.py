"""Registration documents (docs/CATALOGUE.md, "Registration"): whether a host
SDK can enforce one, against a discovered manifest, the caller's requirements
and its context.

``evaluate`` runs the rules in ``RULES`` order; the first that fails rejects
the document and is named (``Verdict.rule``); when none fails it is accepted.
The ``schema`` rule asks the caller's schema check (the canonical
``registration`` schema); the rest read only the document, the manifest, the
requirements (``[{event, mode, effects, modify?}]``) and the context
(``{interactive, environment}``). No I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import codec
from .record import record

REGISTRATION = "registration.schema.json"

SCHEMA = "schema"
DUPLICATE_BACKEND = "duplicate-backend"
TRANSPORT = "transport"
AUTHENTICATION = "authentication"
CREDENTIAL = "credential"
EVENT = "event"
SCOPE = "scope"
TIMEOUT = "timeout"
REQUIREMENT = "requirement"
INTERACTIVE = "interactive"
RULES = (
    SCHEMA,
    DUPLICATE_BACKEND,
    TRANSPORT,
    AUTHENTICATION,
    CREDENTIAL,
    EVENT,
    SCOPE,
    TIMEOUT,
    REQUIREMENT,
    INTERACTIVE,
)

SchemaCheck = Callable[[Any], "str | None"]  # the document's schema problem, else None


@record
class Verdict:
    accepted: bool
    rule: str | None = None  # the first failing rule when rejected
    reason: str = ""

    def entry(self) -> dict[str, Any]:
        """The report's form: ``{"accepted": true}`` or ``{"accepted": false, "rule"}``."""
        if self.accepted:
            return {"accepted": True}
        return {"accepted": False, "rule": self.rule}


ACCEPTED = Verdict(True)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def is_wildcard(pattern: Any) -> bool:
    return isinstance(pattern, str) and (pattern == "*" or pattern.endswith(".*"))


def matches(pattern: Any, event: Any) -> bool:
    """A subscription's event ``pattern`` names ``event``: exactly, ``*`` (every
    type), or ``family.*`` (the types starting with ``family.``)."""
    if not isinstance(pattern, str) or not isinstance(event, str):
        return False
    if pattern == "*":
        return True
    if pattern.endswith(".*"):
        return event.startswith(pattern[:-1])
    return pattern == event


def _limit(value: Any) -> float | None:
    return float(value) if codec.is_number(value) else None


class Manifest:
    """The parts of a discovery manifest the rules read."""

    def __init__(self, manifest: Any) -> None:
        data = _dict(manifest)
        self.transports = _list(data.get("transports"))
        self.authentication = _list(data.get("authentication"))
        policy = _dict(data.get("managedPolicy"))
        self.scopes = _list(policy.get("scopes"))
        # True: the harness lets its user disable hooks, so it cannot enforce a
        # subscription that must not be disabled.
        self.disableable = policy.get("disableable") is True
        limits = _dict(data.get("limits"))
        self.min_timeout = _limit(limits.get("minTimeoutMs"))  # None: not stated, not checked
        self.max_timeout = _limit(limits.get("maxTimeoutMs"))
        self.events: list[dict[str, Any]] = [
            entry
            for entry in _list(data.get("events"))
            if isinstance(entry, dict) and isinstance(entry.get("event"), str)
        ]

    def entry(self, event: Any, mode: Any) -> dict[str, Any] | None:
        """The manifest's entry for ``event`` when it lists ``mode`` among its modes."""
        for entry in self.events:
            if entry["event"] == event and mode in _list(entry.get("modes")):
                return entry
        return None

    def offers(self, pattern: Any, mode: Any) -> bool:
        """Some listed event with ``mode`` is named by ``pattern`` (a wildcard
        must match at least one)."""
        if is_wildcard(pattern):
            return any(
                matches(pattern, entry["event"]) and mode in _list(entry.get("modes"))
                for entry in self.events
            )
        return self.entry(pattern, mode) is not None


def _backends(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [hook for hook in _list(document.get("hooks")) if isinstance(hook, dict)]


def _subscriptions(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for backend in _backends(document):
        for subscription in _list(backend.get("subscriptions")):
            if isinstance(subscription, dict):
                yield subscription


def _duplicate_backend(document: dict[str, Any]) -> str | None:
    seen: set[str] = set()
    for backend in _backends(document):
        key = codec.dumps(backend.get("id"))
        if key in seen:
            return f"two backends share the id {backend.get('id')!r}"
        seen.add(key)
    return None


def _transport(document: dict[str, Any], manifest: Manifest) -> str | None:
    for backend in _backends(document):
        kind = _dict(backend.get("transport")).get("type")
        if kind not in manifest.transports:
            return f"backend {backend.get('id')!r}: transport {kind!r} is not offered"
    return None


def _authentication(document: dict[str, Any], manifest: Manifest) -> str | None:
    for backend in _backends(document):
        if "authentication" not in backend:
            continue
        kind = _dict(backend["authentication"]).get("type")
        if kind not in manifest.authentication:
            return f"backend {backend.get('id')!r}: authentication {kind!r} is not offered"
    return None


def _credential(document: dict[str, Any], context: dict[str, Any]) -> str | None:
    environment = _dict(context.get("environment"))
    for backend in _backends(document):
        auth = _dict(backend.get("authentication"))
        if auth.get("type") != "bearer":
            continue
        if "tokenRef" in auth:
            return f"backend {backend.get('id')!r}: tokenRef has no reference store here"
        name = auth.get("tokenEnv")
        value = environment.get(name) if isinstance(name, str) else None
        if not isinstance(value, str) or not value:
            return f"backend {backend.get('id')!r}: tokenEnv {name!r} has no non-empty value"
    return None


def _event(document: dict[str, Any], manifest: Manifest) -> str | None:
    for subscription in _subscriptions(document):
        mode = subscription.get("mode")
        for pattern in _list(subscription.get("events")):
            if not manifest.offers(pattern, mode):
                return f"{pattern!r} is not offered with mode {mode!r}"
    return None


def _scope(document: dict[str, Any], manifest: Manifest) -> str | None:
    """The managed policy: an offered scope, and no mandatory (non-disableable)
    subscription a manifest with ``managedPolicy.disableable: true`` cannot enforce."""
    for subscription in _subscriptions(document):
        if "scope" in subscription and subscription["scope"] not in manifest.scopes:
            return f"scope {subscription['scope']!r} is not offered"
        if subscription.get("disableable") is False and manifest.disableable:
            return "disableable false cannot be enforced: managedPolicy.disableable is true"
    return None


def _timeout(document: dict[str, Any], manifest: Manifest) -> str | None:
    low, high = manifest.min_timeout, manifest.max_timeout
    for subscription in _subscriptions(document):
        value: Any = subscription.get("timeoutMs")
        if subscription.get("mode") != "intercept" or not codec.is_number(value):
            continue
        if low is not None and value < low:
            return f"timeoutMs {value} is below minTimeoutMs {low}"
        if high is not None and value > high:
            return f"timeoutMs {value} is above maxTimeoutMs {high}"
    return None


def _covered(document: dict[str, Any], event: Any, mode: Any) -> bool:
    return any(
        subscription.get("mode") == mode
        and any(matches(pattern, event) for pattern in _list(subscription.get("events")))
        for subscription in _subscriptions(document)
    )


def _requirement(
    document: dict[str, Any], manifest: Manifest, requirements: list[Any]
) -> str | None:
    for index, requirement in enumerate(requirements):
        where = f"requirements[{index}]"
        if not isinstance(requirement, dict):
            return f"{where} is not an object"
        event, mode = requirement.get("event"), requirement.get("mode")
        effects = requirement.get("effects", [])
        if not isinstance(effects, list):
            return f"{where}: effects is not an array"
        if not _covered(document, event, mode):
            return f"{where}: no subscription with mode {mode!r} matches {event!r}"
        entry = manifest.entry(event, mode)
        if entry is None:
            return f"{where}: the manifest does not list {event!r} with mode {mode!r}"
        if mode == "observe":
            if effects:
                return f"{where}: an observer requires effects"
            continue
        if mode != "intercept":
            return f"{where}: mode {mode!r}"
        capabilities = _dict(entry.get("capabilities"))
        offered = _list(capabilities.get("effects"))
        for effect in effects:
            if effect not in offered:
                return f"{where}: effect {effect!r} is not offered at {event}"
        if "modify" not in requirement:
            continue
        wanted = requirement["modify"]
        if not isinstance(wanted, dict):
            return f"{where}: modify is not an object"
        targets = _dict(capabilities.get("modify"))
        for target, operations in wanted.items():
            if target not in targets:
                return f"{where}: modify target {target!r} is not offered at {event}"
            if not isinstance(operations, dict):
                return f"{where}: modify.{target} is not an object"
            for operation, value in operations.items():
                if value is True and _dict(targets[target]).get(operation) is not True:
                    return f"{where}: modify.{target}.{operation} is not offered at {event}"
    return None


def _interactive(requirements: list[Any], context: dict[str, Any]) -> str | None:
    for index, requirement in enumerate(requirements):
        effects = _list(_dict(requirement).get("effects"))
        if "ask" in effects and context.get("interactive") is not True:
            return f"requirements[{index}] needs ask, and the context is not interactive"
    return None


def evaluate(
    document: Any,
    manifest: Any,
    requirements: Any,
    context: Any,
    schema_error: SchemaCheck,
) -> Verdict:
    """The verdict on ``document``: accepted, or the first rule that fails."""
    problem = schema_error(document)
    if problem is not None or not isinstance(document, dict):
        return Verdict(False, SCHEMA, problem or "not an object")
    offered = Manifest(manifest)
    needs = _list(requirements)
    where = _dict(context)
    checks: tuple[tuple[str, Callable[[], str | None]], ...] = (
        (DUPLICATE_BACKEND, lambda: _duplicate_backend(document)),
        (TRANSPORT, lambda: _transport(document, offered)),
        (AUTHENTICATION, lambda: _authentication(document, offered)),
        (CREDENTIAL, lambda: _credential(document, where)),
        (EVENT, lambda: _event(document, offered)),
        (SCOPE, lambda: _scope(document, offered)),
        (TIMEOUT, lambda: _timeout(document, offered)),
        (REQUIREMENT, lambda: _requirement(document, offered, needs)),
        (INTERACTIVE, lambda: _interactive(needs, where)),
    )
    for rule, check in checks:
        reason = check()
        if reason is not None:
            return Verdict(False, rule, reason)
    return ACCEPTED
