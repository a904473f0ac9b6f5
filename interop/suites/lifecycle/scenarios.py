"""The lifecycle suite's scenario files: the upstream format, loaded and checked as it is.

`{version: 1, scenarios: [{id, requests: {KEY: request}, responses: {KEY: response},
responseSequences?, steps: [...], expected, transports?, inapplicableReason?,
chain?, chainProof?}]}` (docs/LIFECYCLE.md). A file of chains alone, or a
file mixing steps and chains, loads the same way. The shape is
`schemas/scenarios/lifecycle.schema.json`'s (`validate_document`); the checks here
are the references a schema cannot follow.
"""

from __future__ import annotations

import base64
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
from interop.suites.scenario_schema import row_where, validate_document

SCHEMA = "lifecycle"  # schemas/scenarios/lifecycle.schema.json: the format's shape
ANSWER_KEYS = ("expected", "chainProof")
TRANSPORTS = ("http", "stdio")
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
    """A lifecycle row, its parts read once when it is made (the loader has checked them
    against schemas/scenarios/lifecycle.schema.json): the suite and its verifier read
    these fields; `raw` is kept to write the row back out."""

    id: str
    raw: dict[str, Any]
    requests: dict[str, Any] = field(init=False)
    responses: dict[str, Any] = field(init=False)
    steps: list[dict[str, Any]] = field(init=False)
    expected: dict[str, Any] = field(init=False)
    chain: dict[str, Any] | None = field(init=False)
    chain_proof: dict[str, Any] = field(init=False)  # {} on a row without a chain
    transports: tuple[str, ...] = field(init=False)
    inapplicable_reason: str = field(init=False)
    response_sequences: dict[str, Any] = field(init=False)
    observe_faults: Any = field(init=False)

    def __post_init__(self) -> None:
        raw = self.raw
        chain = raw.get("chain")
        reason = raw.get("inapplicableReason")
        made = {
            "requests": dict(raw["requests"]),
            "responses": dict(raw.get("responses", {})),
            "steps": list(raw.get("steps", [])),
            "expected": dict(raw["expected"]),
            "chain": chain if isinstance(chain, dict) else None,
            "chain_proof": dict(raw.get("chainProof", {})),
            "transports": tuple(raw.get("transports", TRANSPORTS)),
            "inapplicable_reason": reason
            if isinstance(reason, str)
            else "the scenario runs on another transport",
            "response_sequences": dict(raw.get("responseSequences", {})),
            "observe_faults": raw.get("observeFaults"),
        }
        for name, value in made.items():
            object.__setattr__(self, name, value)

    def fault(self, key: str, receipt: int) -> str | None:
        """The scripted fault answering the `receipt`-th receipt of requests[key], if any."""
        sequence = self.response_sequences.get(key)
        if not sequence:
            return None
        entry = sequence[min(receipt, len(sequence) - 1)]
        return entry.get("fault") if isinstance(entry, dict) else None

    def request_id(self, key: str) -> str:
        return str(self.requests[key]["id"])

    @property
    def extension(self) -> str | None:
        """The project extension the row needs, or None for a contract v1 row: scripted
        faults, silent observers, deadlines and unreachable backends are ours
        (docs/LIFECYCLE.md, "Operational failures, several backends, silent observers")."""
        faulted = any(
            isinstance(entry, dict) and "fault" in entry
            for sequence in self.response_sequences.values()
            for entry in sequence
        )
        chain = self.chain or {}
        subscriptions = chain.get("subscriptions", [])
        if (
            faulted
            or self.observe_faults
            or any("timeoutMs" in s or s.get("backend") == UNREACHABLE for s in subscriptions)
            or self._fails_open_unsettled()
        ):
            return OPERATIONAL_FAILURES
        return None

    def _fails_open_unsettled(self) -> bool:
        """A `failOpen` of a request neither cancelled nor published before it: the
        fallback after an operational failure (an error answer, a rejected or a staged
        reply) is ours; contract v1 fails open only after a cancel or a publication."""
        published = set(self.expected.get("published", []))
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
        response = self.responses.get(key)
        if not isinstance(response, dict) or "error" in response:
            return True
        result = response.get("result")
        effects = result.get("effects") if isinstance(result, dict) else None
        params = self.requests[key].get("params", {})
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


def _check(path: Path, index: int, raw: dict[str, Any]) -> LifecycleScenario:
    """One row the schema passed, with what it cannot say: every request key a step,
    `responseSequences` or `observeFaults` names is one of the row's requests."""
    where = row_where(path, index, raw)
    requests = raw["requests"]
    for number, step in enumerate(raw.get("steps", [])):
        if "key" in step and step["key"] not in requests:
            raise ScenarioError(
                f"{where}: steps[{number}].key: names unknown request {step['key']!r} "
                f"(the requests are {', '.join(requests)})"
            )
    for named in ("responseSequences", "observeFaults"):
        for key in raw.get(named, {}):
            if key not in requests:
                raise ScenarioError(
                    f"{where}: {named}: {key!r} is no request key of the row "
                    f"(the requests are {', '.join(requests)})"
                )
    return LifecycleScenario(raw["id"], raw)


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
    """A lifecycle file checked against `schemas/scenarios/lifecycle.schema.json`, then
    row by row."""
    try:
        document = load_file(path)
    except JsonError as exc:
        raise ScenarioError(str(exc)) from None
    validate_document(path, document, SCHEMA)
    rows = document["scenarios"]
    scenarios = tuple(_check(path, i, s) for i, s in enumerate(rows))
    seen: set[str] = set()
    for index, scenario in enumerate(scenarios):
        if scenario.id in seen:
            raise ScenarioError(
                f"{row_where(path, index, rows[index])}: the id {scenario.id!r} is used twice; "
                "ids must be unique in a file"
            )
        seen.add(scenario.id)
    name = path.name.removesuffix(".json")
    return LifecycleSet(name, path.resolve(), scenarios, document)


def load_sets(paths: list[Path]) -> LifecycleSets:
    sets = LifecycleSets(load_set(p) for p in paths)
    names = [s.name for s in sets]
    for name in names:
        if names.count(name) > 1:
            raise ScenarioError(f"two scenario files share the set name {name!r}: rename one")
    return sets
