"""The catalogue suite: every event type over the wire, discovery, lineage, registrations.

Each combination is a job of its own: per scenario set, a fresh server (over
HTTP started here, over stdio started by the client) and one client process
that runs every step itself (docs/CATALOGUE.md). The lineage state a server
keeps lasts for one set; consecutive sets that name nothing alike (no id,
source or registration in common) run as one (`CatalogueSets.runs`). Stdio
runs with auth none only; an adapter without the lifecycle commands is
unsupported.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.results import Outcome
from interop.runtime.context import RunContext
from interop.suites.base import Done, Job
from interop.suites.catalogue import probes
from interop.suites.catalogue.scenarios import (
    CatalogueScenario,
    CatalogueSet,
    CatalogueSets,
    load_sets,
)
from interop.suites.catalogue.verify import verify_set
from interop.suites.steps import (
    contract_v1,
    one_job_each,
    run_sets,
    run_step_client,
    run_v1_set,
    stdio_auth_none,
    stop_server,
    unprobed,
)

RECEIPTS = "catalogue-control.schema.json#/$defs/receipts"


MANIFEST_M = (
    "our registration expectations, written for the manifest our servers publish (M, "
    "docs/CATALOGUE.md), not for a contract v1 server's own manifest"
)


def _manifest_bound(
    row: CatalogueScenario, scenario_set: CatalogueSet, server: Adapter
) -> str | None:
    """A register row of our set judged against a contract v1 server's manifest: our
    expectations assume manifest M, so the row is unsupported (upstream's vectors stay)."""
    ours = "upstream" not in scenario_set.path.parts
    registers = any(step.get("op") == "register" for step in row.steps)
    return MANIFEST_M if ours and registers and not server.blind else None


def _our_reading(row: CatalogueScenario, server: Adapter) -> str | None:
    """A row whose verdict rests on a lineage reading of ours, judged against a contract
    v1 server: unsupported, naming the reading."""
    if row.reading is None or server.blind:
        return None
    return (
        f"our lineage reading that {row.reading} (docs/CATALOGUE.md), beyond what the spec "
        "says a receiver checks (task-workspace-lineage.md, 'Lineage and actual changes': "
        "cycles, source scope, a task's identity and operation under its known proposal, "
        "explicit no-op task and workspace updates)"
    )


def _needs(row: CatalogueScenario, *, scenario_set: CatalogueSet, server: Adapter) -> str | None:
    """The extension a row needs with a contract v1 adapter in the combination."""
    return row.extension or _manifest_bound(row, scenario_set, server) or _our_reading(row, server)


def dependency_groups(rows: list[CatalogueScenario]) -> list[list[CatalogueScenario]]:
    """Rows that must run together when run again: a row whose event names a parent
    (`parentEventId`) that another row sends keeps that row with it (the lineage a
    server keeps lasts for one set's run), in file order; the rest run alone."""
    owner: dict[str, int] = {}
    for index, row in enumerate(rows):
        for event_id in _sent_events(row):
            owner.setdefault(event_id, index)
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for index, row in enumerate(rows):
        for reference in _parents(row):
            if reference in owner:
                parent[find(index)] = find(owner[reference])
    groups: dict[int, list[CatalogueScenario]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(find(index), []).append(row)
    return sorted(groups.values(), key=lambda group: rows.index(group[0]))


def _events(row: CatalogueScenario) -> list[dict[str, Any]]:
    found = []
    for step in row.steps:
        message = step.get("message")
        params = message.get("params") if isinstance(message, dict) else None
        event = params.get("event") if isinstance(params, dict) else None
        if isinstance(event, dict):
            found.append(event)
    return found


def _sent_events(row: CatalogueScenario) -> list[str]:
    return [e["id"] for e in _events(row) if isinstance(e.get("id"), str)]


def _parents(row: CatalogueScenario) -> list[str]:
    return [e["parentEventId"] for e in _events(row) if isinstance(e.get("parentEventId"), str)]


class CatalogueSuite:
    name = "catalogue"

    def load_sets(self, paths: list[Path]) -> CatalogueSets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        return stdio_auth_none(combination)

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return one_job_each(combinations, adapters)

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: CatalogueSets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        combination = job.combinations[0]
        v1 = contract_v1(combination, adapters)
        probed = False  # the receiver is probed once per combination

        def run_set(outcome: Outcome, combination: Combination, chosen: CatalogueSet) -> None:
            nonlocal probed
            if not v1:
                probed = self._run_set(ctx, outcome, combination, chosen, adapters, probed)
                return
            probed = run_v1_set(
                ctx,
                outcome,
                chosen,
                lambda out, subset, seen: self._run_set(
                    ctx, out, combination, subset, adapters, seen
                ),
                probed,
                extension=functools.partial(
                    _needs, scenario_set=chosen, server=adapters[combination.server]
                ),
                together=dependency_groups,
            )

        def finish(outcome: Outcome, missing: list[str]) -> None:
            outcome.rows += unprobed(
                combination, missing, probed, probes.skipped,
                over_http="the receiver is probed over HTTP",
                never="the combination's server was not running after any of its sets, so it "
                "was never probed",
            )  # fmt: skip

        runs = sets.runs(apart=v1)
        return run_sets(self.name, job, ctx, runs, adapters, run_set, done, finish=finish)

    def _run_set(
        self,
        ctx: RunContext,
        outcome: Outcome,
        combination: Combination,
        scenario_set: CatalogueSet,
        adapters: dict[str, Adapter],
        probed: bool,
    ) -> bool:
        """One set's client run against a fresh server, judged into `outcome`; probes the
        receiver once per combination. Returns whether it has been probed (now or before)."""
        client = adapters[combination.client]
        home = ctx.unique(f"catalogue-{scenario_set.name}")
        step = run_step_client(
            ctx,
            combination,
            adapters,
            suite="catalogue",
            set_name=scenario_set.name,
            server_file=scenario_set.write(home / "server.json", blind=True),
            client_file=scenario_set.write(home / "client.json", blind=client.blind),
            extra={"suite": "catalogue", "childPidFile": str(home / "child.json")},
            client_schema="catalogue-client-config.schema.json",
            receipts_schema=RECEIPTS,
        )
        judged, set_errors = verify_set(
            scenario_set.name,
            list(scenario_set.scenarios),
            report=step.report,
            entries=step.entries,
            client_exit=step.exit_code(client.blind),
            language=client.language,
            profile=ctx.profile,
            blind=client.blind,
            stage=f"client[{scenario_set.name}]",
            prior_errors=step.errors,
        )
        step.mark(judged, combination.transport)
        for row in judged:
            row.set = scenario_set.origin(row.id)
        outcome.rows += judged
        outcome.errors += set_errors
        # the probes judge the receiver alone and use identities of their own: a row's
        # failure, or the client's, does not void them; a server that exited does
        alive = step.server is not None and step.server.exit_description() is None
        if step.server is not None and step.run is not None and alive and not probed:
            probed = True
            outcome.rows += probes.run_probes(ctx, step.server, combination.auth)
        stop_server(ctx, outcome, combination, step, scenario_set.name)
        return probed
