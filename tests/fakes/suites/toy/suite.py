"""The toy suite: each adapter's client, run once a set over stdio, answers every row's sum.

The client command gets `--config PATH` (`{"scenarioFile", "reportFile"}`); the file it
reads carries no expectations, and its report is `{row id: sum}`.
"""

from __future__ import annotations

import json
from pathlib import Path

from interop.suites.toy.scenarios import ToySet, ToySets, load_sets
from interop.suites.toy.verify import verify_set

from interop.contract.manifest import Adapter
from interop.grid import Combination
from interop.jsonvalue import JsonError, load_file
from interop.results import CombinationError, Outcome
from interop.runtime.context import RunContext, write_json
from interop.runtime.process import WatchdogExpired, describe_exit, wait_exit
from interop.suites.base import Done, Job

ALONE = "the toy suite runs each adapter's client alone, over stdio without authentication"


class ToySuite:
    name = "toy"

    def load_sets(self, paths: list[Path]) -> ToySets:
        return load_sets(paths)

    def applicability(self, combination: Combination, adapters: dict[str, Adapter]) -> str | None:
        if combination.client != combination.server:
            return ALONE
        if (combination.transport, combination.auth) != ("stdio", "none"):
            return ALONE
        return None

    def plan(self, combinations: list[Combination], adapters: dict[str, Adapter]) -> list[Job]:
        return [Job([c], 1.0) for c in combinations]

    def run(
        self,
        job: Job,
        ctx: RunContext,
        sets: ToySets,
        adapters: dict[str, Adapter],
        done: Done | None = None,
    ) -> list[Outcome]:
        outcomes = []
        for combination in job.combinations:
            outcome = Outcome(self.name, combination)
            for scenario_set in sets:
                self._run_set(ctx, adapters[combination.client], scenario_set, outcome)
            outcomes.append(outcome)
            if done is not None:
                done(outcome)
        return outcomes

    def _run_set(self, ctx: RunContext, adapter: Adapter, toy: ToySet, outcome: Outcome) -> None:
        home = ctx.unique(f"toy-{adapter.name}")
        blind = home / "toy.json"
        rows = [{k: v for k, v in row.raw.items() if k != "expected"} for row in toy.rows]
        blind.write_text(json.dumps({"version": 1, "scenarios": rows}), encoding="utf-8")
        report = home / "report.json"
        config = write_json(
            home / "config.json", {"scenarioFile": str(blind), "reportFile": str(report)}
        )
        command = [*(adapter.command("client") or ()), "--config", str(config)]
        log = home / "client.log"
        process = ctx.registry.spawn(
            command, owner=home.name, adapter=adapter.name, cwd=adapter.directory,
            label=f"{adapter.name} toy client", log_path=log,
        )  # fmt: skip
        try:
            code = wait_exit(process, ctx.timeouts.client)
        except WatchdogExpired as exc:
            outcome.errors.append(CombinationError("client", "ClientTimeout", str(exc)))
            return
        finally:
            process.close()
            ctx.keep_log(log, f"toy/{adapter.name}-{toy.name}.log")
        if code != 0:
            message = f"the toy client {describe_exit(code)}"
            outcome.errors.append(CombinationError("client", "ClientExit", message))
            return
        try:
            answers = load_file(report)
        except (OSError, JsonError) as exc:
            outcome.errors.append(CombinationError("report", "ReportMissing", str(exc)))
            return
        verdicts, errors = verify_set(toy, answers)
        outcome.rows.extend(verdicts)
        outcome.errors.extend(errors)
