"""What one run shares: its temp dir, trust, logs, process registry and timeouts."""

from __future__ import annotations

import itertools
import json
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from interop import ROOT
from interop.issuer import Issuer
from interop.redact import Redactor
from interop.runtime import interrupts, process
from interop.trust import Trust

OUR_SCHEMAS = ROOT / "schemas" / "draft"
SCHEMA_DIR_VARIABLE = "AHP_SCHEMA_DIR"  # where upstream SDKs look for the canonical schemas


@dataclass
class Timeouts:
    startup: float = 30.0
    client: float = 120.0
    shutdown: float = 5.0


@dataclass
class RunContext:
    """Everything one run shares: its temp dir, trust, logs and process registry."""

    work: Path
    logs: Path
    trust: Trust
    redactor: Redactor
    registry: process.Registry
    profile: str
    timeouts: Timeouts
    server_reuse: bool = True
    # the spec's canonical schemas (`--spec PATH`: PATH/schema/draft), handed to
    # contract v1 adapters as upstream drivers hand theirs; None: ours for everyone
    spec_schemas: Path | None = None
    # a recheck (runner): clients talk through recording relays, whose frames are kept
    # as the failure's wire evidence (runtime/capture.py, the stdio relay's replies)
    capture: bool = False
    cancelled: threading.Event = field(default_factory=threading.Event)
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def schema_dir(self, adapter: Any) -> Path:
        """The canonical schemas an adapter is handed (its config's `schemaDir`): the
        spec's for a contract v1 adapter when `--spec` gave them, else ours."""
        if self.spec_schemas is not None and not adapter.blind:
            return self.spec_schemas
        return OUR_SCHEMAS

    def unique(self, prefix: str) -> Path:
        path = self.work / f"{prefix}-{next(self._counter)}"
        path.mkdir(parents=True)
        return path

    def keep_log(self, source: Path | None, name: str) -> None:
        """Copy an adapter log into the report's log folder, redacted."""
        if source is None or not source.exists():
            return
        target = self.logs / name
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("ab") as out:
            out.write(self.redactor.bytes(source.read_bytes()))


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")
    return path


@contextmanager
def run_context(
    *,
    logs: Path,
    auth: list[str],
    profile: str,
    timeouts: Timeouts,
    server_reuse: bool = True,
    spec_schemas: Path | None = None,
) -> Iterator[RunContext]:
    """One run's shared state: temp dir, trust, issuer, process registry, signals.

    SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt for the duration
    (`interrupts.handled`), so every way a run can be stopped kills the
    adapters and deletes the trust material; setting up and tearing down are
    never cut in half by a signal. Everything this opens is closed on the way out.
    """
    process.become_subreaper()
    redactor = Redactor()
    registry = process.Registry()
    # Every adapter process (and the stdio servers its clients start) finds the same
    # canonical schemas through the variable upstream SDKs read; ours read `schemaDir`.
    registry.environment[SCHEMA_DIR_VARIABLE] = str(spec_schemas or OUR_SCHEMAS)
    redactor.add_path(str(ROOT), "<repo>")
    logs.mkdir(parents=True, exist_ok=True)
    with interrupts.handled():
        stack = ExitStack()
        try:
            with interrupts.deferred():  # nothing made here may escape its removal
                stack.callback(registry.kill_all)
                work = Path(tempfile.mkdtemp(prefix="ahp-run-"))
                stack.callback(shutil.rmtree, work, True)
                redactor.add_path(str(work), "<run>")
                trust = Trust.create(redactor, parent=work)
                stack.callback(trust.destroy)
                stack.callback(registry.kill_all)
                if "oauth" in auth:
                    stack.enter_context(Issuer(trust, profile))
            yield RunContext(
                work=work,
                logs=logs,
                trust=trust,
                redactor=redactor,
                registry=registry,
                profile=profile,
                timeouts=timeouts,
                server_reuse=server_reuse,
                spec_schemas=spec_schemas,
            )
        finally:
            with interrupts.deferred():
                stack.close()
