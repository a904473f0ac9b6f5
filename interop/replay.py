"""`python -m interop unit-tests`: each adapter's own tests, then its replay judged here.

An adapter that declares `replay` (docs/CONTRACT.md, "Replay") applies every
core row in process and writes a client report; the harness judges that
report with the core suite's verifier, so no adapter's test suite carries a
copy of the pass/fail rule.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from interop import ROOT
from interop.contract.check import contract_problem
from interop.contract.manifest import Adapter
from interop.jsonvalue import JsonError, load_file
from interop.results import Status
from interop.runtime.context import write_json
from interop.suites.core import SUITE, CoreSuite
from interop.suites.core.verify import verify_set

REPLAY_TIMEOUT = 300.0


def replay(adapter: Adapter, work: Path) -> list[str]:
    """Problems of `adapter`'s replay over the core suite's sets ([] when every row passes)."""
    command = adapter.command("replay")
    assert command is not None
    suite = CoreSuite()
    problems: list[str] = []
    for scenario_set in suite.load_sets(SUITE.default_sets(ROOT)):
        home = work / f"{adapter.name}-{scenario_set.name}"
        home.mkdir(parents=True)
        config = {
            "scenarioFile": str(scenario_set.write_blind(home / "blind.json")),
            "reportFile": str(home / "report.json"),
            "schemaDir": str(ROOT / "schemas" / "draft"),
            "language": adapter.language,
        }
        problem = contract_problem("replay-config.schema.json", config)
        assert problem is None, problem
        path = write_json(home / "replay-config.json", config)
        try:
            completed = subprocess.run(
                [*command, "--config", str(path)],
                cwd=adapter.directory,
                timeout=REPLAY_TIMEOUT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            problems.append(f"{scenario_set.name}: replay did not run: {exc}")
            continue
        try:
            report = load_file(Path(config["reportFile"]))
        except JsonError as exc:
            tail = completed.stdout.decode(errors="replace").strip().splitlines()[-5:]
            problems.append(f"{scenario_set.name}: {exc} (output: {' | '.join(tail)})")
            continue
        verdict = verify_set(
            scenario_set,
            report=report,
            receipts=None,
            client_exit=completed.returncode,
            language=adapter.language,
            blind=adapter.blind,
            stage=f"replay[{scenario_set.name}]",
            wire=False,
        )
        problems += [f"{e.stage}: {e.error_class}: {e.message}" for e in verdict.errors]
        failing = [r for r in verdict.rows if r.status != Status.PASSED]
        problems += [f"{scenario_set.name}/{r.id}: {r.status}: {r.error}" for r in failing]
        passed = len(verdict.rows) - len(failing)
        print(
            f"{adapter.name}: replay {scenario_set.name}: {passed}/{len(verdict.rows)} passed",
            file=sys.stderr,
        )
    return problems


def unit_tests(adapters: dict[str, Adapter], names: list[str]) -> int:
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ahp-replay-") as temporary:
        for name in names:
            adapter = adapters[name]
            command = adapter.command("test")
            if command is not None:
                print(f"{name}: {' '.join(command)}", file=sys.stderr, flush=True)
                if subprocess.run(list(command), cwd=adapter.directory).returncode != 0:
                    failures.append(f"{name}: its tests failed")
            else:
                print(f"{name}: no 'test' command", file=sys.stderr)
            if adapter.command("replay") is not None:
                problems = replay(adapter, Path(temporary))
                for problem in problems[:20]:
                    print(f"  {problem}", file=sys.stderr)
                if problems:
                    failures.append(f"{name}: replay: {len(problems)} problems")
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    return 1 if failures else 0
