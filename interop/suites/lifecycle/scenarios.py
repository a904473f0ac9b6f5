"""The lifecycle suite's scenario files: the upstream format, loaded and checked as it is.

`{version: 1, scenarios: [{id, requests: {KEY: request}, responses: {KEY: response},
responseSequences?, steps: [...], expected, transports?, inapplicableReason?,
chain?, chainProof?}]}` (docs/LIFECYCLE.md). A file of chains alone, or a
file mixing steps and chains, loads the same way.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.suites.base import (
    MergeableSet,
    ScenarioError,
    identifiers,
    merged_runs,
    set_file,
    write_set_file,
)

ANSWER_KEYS = ("expected", "chainProof")
STEP_FIELDS: dict[str, tuple[str, ...]] = {
    "send": ("key", "slot"),
    "wait": ("key", "count"),
    "release": ("key",),
    "receive": ("slot",),
    "accept": ("key",),
    "cancel": ("key",),
    "failOpen": ("key",),
    "observe": ("key", "subscription"),
    "upload": ("subscription", "ref", "bodyBase64", "size", "sha256"),
    "emit": ("response",),
}
STEP_EXPECTED = ("published", "cancelled", "ignored", "states", "observations", "uploadStatuses")
CHAIN_EXPECTED = ("called", "failures", "observations", "input")
TRANSPORTS = ("http", "stdio")
FAULTS = ("server-error", "malformed", "timeout")  # docs/LIFECYCLE.md [ext]
OBSERVE_FAULTS = (None, "silent")
UNREACHABLE = "unreachable"
OPERATIONAL_FAILURES = (
    "the project extension 'operational failures' (scripted faults, deadlines, unreachable "
    "backends, silent observers, fail-open after an error answer or a refused or staged "
    "reply: docs/LIFECYCLE.md), which contract v1 adapters do not have"
)


@dataclass(frozen=True)
class Upload:
    """One upload step: the bytes, what the sender declares, and what it is for."""

    index: int  # position among the scenario's steps
    alias: str
    body: bytes
    size: int
    sha256: str
    subscription: str


@dataclass(frozen=True)
class LifecycleScenario:
    id: str
    raw: dict[str, Any]

    @property
    def requests(self) -> dict[str, Any]:
        return dict(self.raw["requests"])

    @property
    def steps(self) -> list[dict[str, Any]]:
        return list(self.raw.get("steps", []))

    @property
    def expected(self) -> dict[str, Any]:
        return dict(self.raw["expected"])

    @property
    def chain(self) -> dict[str, Any] | None:
        chain = self.raw.get("chain")
        return chain if isinstance(chain, dict) else None

    @property
    def transports(self) -> tuple[str, ...]:
        return tuple(self.raw.get("transports", TRANSPORTS))

    @property
    def inapplicable_reason(self) -> str:
        reason = self.raw.get("inapplicableReason")
        return reason if isinstance(reason, str) else "the scenario runs on another transport"

    def fault(self, key: str, receipt: int) -> str | None:
        """The scripted fault answering the `receipt`-th receipt of requests[key], if any."""
        sequence = self.raw.get("responseSequences", {}).get(key)
        if not sequence:
            return None
        entry = sequence[min(receipt, len(sequence) - 1)]
        return entry.get("fault") if isinstance(entry, dict) else None

    def request_id(self, key: str) -> str:
        return str(self.raw["requests"][key]["id"])

    @property
    def extension(self) -> str | None:
        """The project extension the row needs, or None for a contract v1 row: scripted
        faults, silent observers, deadlines and unreachable backends are ours
        (docs/LIFECYCLE.md, "Operational failures, several backends, silent observers")."""
        faulted = any(
            isinstance(entry, dict) and "fault" in entry
            for sequence in self.raw.get("responseSequences", {}).values()
            for entry in sequence
        )
        chain = self.chain or {}
        subscriptions = chain.get("subscriptions", [])
        if (
            faulted
            or self.raw.get("observeFaults")
            or any("timeoutMs" in s or s.get("backend") == UNREACHABLE for s in subscriptions)
            or self._fails_open_unsettled()
        ):
            return OPERATIONAL_FAILURES
        return None

    def _fails_open_unsettled(self) -> bool:
        """A `failOpen` of a request neither cancelled nor published before it: the
        fallback after an operational failure (an error answer, a rejected or a staged
        reply) is ours; contract v1 fails open only after a cancel or a publication."""
        published = set(self.raw["expected"].get("published", []))
        settled: set[str] = set()
        for step in self.steps:
            key = str(step.get("key"))
            if step["op"] == "cancel" or (
                step["op"] == "accept"
                and self.request_id(key) in published
                and not self._refused(key)
            ):
                settled.add(key)
            elif step["op"] == "failOpen" and key not in settled:
                return True
        return False

    def _refused(self, key: str) -> bool:
        """Whether requests[key]'s scripted answer is one no client publishes: a JSON-RPC
        error, or an effect its request does not advertise (a row shape, not a verdict)."""
        response = self.raw["responses"].get(key)
        if not isinstance(response, dict) or "error" in response:
            return True
        result = response.get("result")
        effects = result.get("effects") if isinstance(result, dict) else None
        params = self.raw["requests"][key].get("params", {})
        advertised = params.get("capabilities", {}).get("effects", [])
        return not isinstance(effects, list) or any(
            not isinstance(e, dict) or e.get("type") not in advertised for e in effects
        )

    def uploads(self) -> list[Upload]:
        found = []
        for index, step in enumerate(self.steps):
            if step["op"] == "upload":
                body = base64.b64decode(step["bodyBase64"], validate=True)
                found.append(
                    Upload(
                        index,
                        step["ref"],
                        body,
                        step["size"],
                        step["sha256"],
                        step["subscription"],
                    )
                )
        return found


def _check(path: Path, index: int, raw: Any) -> LifecycleScenario:
    where = f"{path}: scenarios[{index}]"
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str) or not raw["id"]:
        raise ScenarioError(f"{where}: a scenario needs a non-empty string id")
    where = f"{path}: scenario {raw['id']!r}"
    for key in ("requests", "responses"):
        if not isinstance(raw.get(key), dict):
            raise ScenarioError(f"{where}: {key!r} must be an object of request keys")
    for key, request in raw["requests"].items():
        if not isinstance(request, dict) or not isinstance(request.get("id"), str):
            raise ScenarioError(f"{where}: requests.{key} must be a request with a string id")
    if not isinstance(raw.get("steps", []), list):
        raise ScenarioError(f"{where}: 'steps' must be an array")
    for number, step in enumerate(raw.get("steps", [])):
        op = step.get("op") if isinstance(step, dict) else None
        if op not in STEP_FIELDS:
            raise ScenarioError(
                f"{where}: steps[{number}]: unknown op {op!r} (known: {', '.join(STEP_FIELDS)})"
            )
        missing = [f for f in STEP_FIELDS[op] if f not in step]
        if missing:
            raise ScenarioError(f"{where}: steps[{number}] ({op}) lacks {', '.join(missing)}")
        if "key" in step and step["key"] not in raw["requests"]:
            raise ScenarioError(f"{where}: steps[{number}] names unknown request {step['key']!r}")
        if op == "upload":
            try:
                body = base64.b64decode(step["bodyBase64"], validate=True)
            except (binascii.Error, ValueError):
                raise ScenarioError(f"{where}: steps[{number}]: bodyBase64 is not base64") from None
            del body
    expected = raw.get("expected")
    wanted = CHAIN_EXPECTED if "chain" in raw else STEP_EXPECTED
    if not isinstance(expected, dict) or sorted(expected) != sorted(wanted):
        raise ScenarioError(f"{where}: 'expected' must have exactly {', '.join(wanted)}")
    if "chain" in raw:
        chain = raw["chain"]
        if not isinstance(chain, dict) or not isinstance(chain.get("subscriptions"), list):
            raise ScenarioError(f"{where}: 'chain' needs a subscriptions array")
        if "a" not in raw["requests"]:
            raise ScenarioError(f"{where}: a chain's boundary request is requests.a")
        proof = raw.get("chainProof")
        if not isinstance(proof, dict) or not {"requests", "observations"} <= set(proof):
            raise ScenarioError(f"{where}: a chain needs chainProof.requests and .observations")
    _check_faults(where, raw)
    transports = raw.get("transports", list(TRANSPORTS))
    if not isinstance(transports, list) or not set(transports) <= set(TRANSPORTS):
        raise ScenarioError(f"{where}: 'transports' must list http and/or stdio")
    return LifecycleScenario(raw["id"], raw)


def _check_faults(where: str, raw: dict[str, Any]) -> None:
    """Scripted faults, deadlines and backends name only what docs/LIFECYCLE.md defines."""
    sequences = raw.get("responseSequences", {})
    if not isinstance(sequences, dict):
        raise ScenarioError(f"{where}: 'responseSequences' must be an object of request keys")
    for key, sequence in sequences.items():
        if key not in raw["requests"] or not isinstance(sequence, list) or not sequence:
            raise ScenarioError(
                f"{where}: responseSequences.{key} must be a non-empty array for a known request"
            )
        for n, entry in enumerate(sequence):
            if isinstance(entry, dict) and "fault" in entry:
                if set(entry) != {"fault"} or entry["fault"] not in FAULTS:
                    raise ScenarioError(
                        f"{where}: responseSequences.{key}[{n}]: a fault is exactly "
                        f'{{"fault": KIND}} with KIND one of {", ".join(FAULTS)}'
                    )
                if "chain" not in raw:
                    raise ScenarioError(
                        f"{where}: responseSequences.{key}[{n}]: faults are for chains only"
                    )
    faults = raw.get("observeFaults", {})
    if not isinstance(faults, dict) or any(
        key not in raw["requests"]
        or not isinstance(entries, list)
        or any(e not in OBSERVE_FAULTS for e in entries)
        for key, entries in faults.items()
    ):
        raise ScenarioError(
            f"{where}: 'observeFaults' maps a request key to an array of null or \"silent\""
        )
    chain = raw.get("chain")
    for n, subscription in enumerate(chain.get("subscriptions", []) if chain else []):
        place = f"{where}: chain.subscriptions[{n}]"
        if not isinstance(subscription, dict):
            raise ScenarioError(f"{place} must be an object")
        if "timeoutMs" in subscription:
            deadline = subscription["timeoutMs"]
            if subscription.get("mode") != "intercept":
                raise ScenarioError(f"{place}: an observer never carries timeoutMs (protocol)")
            if type(deadline) is not int or deadline < 1:
                raise ScenarioError(f"{place}: timeoutMs must be a positive integer")
        if subscription.get("backend") == UNREACHABLE and subscription.get("mode") != "intercept":
            raise ScenarioError(f"{place}: only an intercept subscription calls a backend")


@dataclass(frozen=True)
class LifecycleSet(MergeableSet):
    name: str
    path: Path
    scenarios: tuple[LifecycleScenario, ...]
    document: dict[str, Any]
    origins: dict[str, str] = field(default_factory=dict)  # row id -> set, when merged

    def for_transport(self, transport: str) -> list[LifecycleScenario]:
        return [s for s in self.scenarios if transport in s.transports]

    def write(self, path: Path, transport: str, *, blind: bool) -> Path:
        """The file an adapter gets: this transport's rows, without answers when blind."""

        def rows() -> list[dict[str, Any]]:
            return [
                {k: v for k, v in s.raw.items() if not blind or k not in ANSWER_KEYS}
                for s in self.for_transport(transport)
            ]

        return write_set_file(path, self.document, rows, owner=self, variant=(transport, blind))

    def write_with_uploads(self, path: Path, transport: str, endpoint: str) -> Path:
        """The whole file (a contract v1 client's) with `endpoint` in every upload step's
        own `upload` block that names none, as upstream drivers inject it over HTTP: a
        v1 client takes a step's block as it is, where ours fall back to the config's."""

        def row(scenario: LifecycleScenario) -> dict[str, Any]:
            raw = copy.deepcopy(scenario.raw)
            for step in raw.get("steps", []):
                block = step.get("upload") if step.get("op") == "upload" else None
                if isinstance(block, dict) and "endpoint" not in block:
                    block["endpoint"] = endpoint
            return raw

        return write_set_file(path, self.document, [row(s) for s in self.for_transport(transport)])


class LifecycleSets(list[LifecycleSet]):
    def describe(self) -> list[dict[str, Any]]:
        from interop.suites.lifecycle.probes import EXPECTED, SET

        described = [
            {
                "name": s.name,
                "file": set_file(s.path),
                "sha256": hashlib.sha256(s.path.read_bytes()).hexdigest(),
                "scenarios": len(s.scenarios),
                "rows": [(row.id, row.raw["expected"]) for row in s.scenarios],
            }
            for s in self
        ]
        probes: dict[str, Any] = {"name": SET, "file": "interop/suites/lifecycle/probes.py"}
        probes["sha256"] = ""
        probes["scenarios"] = len(EXPECTED)
        return [*described, {**probes, "rows": list(EXPECTED.items())}]

    def row_count(self) -> int:
        from interop.suites.lifecycle.probes import EXPECTED

        return sum(len(s.scenarios) for s in self) + len(EXPECTED)

    def runs(self, *, apart: bool = False) -> list[LifecycleSet]:
        """The sets as a combination runs them: consecutive sets that name nothing
        alike (`merge_groups`: ids, requests, uploads, backends) as one file, one
        server and one client run. Every row keeps its own set's name
        (`LifecycleSet.origin`) and is judged alone, as before. `apart`: each set
        in processes of its own (a contract v1 adapter: the upstream vectors never
        share a fate with our rows)."""
        return list(self) if apart else merged_runs(list(self), _names)


# What a lifecycle server keeps state by: request and event ids, parents, upload
# refs, backends. Sources, tool names and content selections (`subscription`:
# body, metadata) are shared freely: the lifecycle rules keep no lineage.
STATE_KEYS = frozenset({"id", "parentEventId", "ref", "backend"})


def _names(scenario_set: LifecycleSet) -> set[str]:
    return identifiers([s.raw for s in scenario_set.scenarios], STATE_KEYS)  # row ids among them


def load_set(path: Path) -> LifecycleSet:
    try:
        document = load_file(path)
    except JsonError as exc:
        raise ScenarioError(str(exc)) from None
    if not isinstance(document, dict) or document.get("version") != 1:
        raise ScenarioError(f"{path}: expected an object with 'version': 1")
    raw = document.get("scenarios")
    if not isinstance(raw, list) or not raw:
        raise ScenarioError(f"{path}: 'scenarios' must be a non-empty array")
    scenarios = tuple(_check(path, i, s) for i, s in enumerate(raw))
    ids = [s.id for s in scenarios]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise ScenarioError(f"{path}: duplicate scenario ids: {', '.join(duplicated)}")
    name = path.name.removesuffix(".json")
    return LifecycleSet(name, path.resolve(), scenarios, document)


def load_sets(paths: list[Path]) -> LifecycleSets:
    sets = LifecycleSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"two scenario files share the set name {name!r}: rename one")
    return sets
