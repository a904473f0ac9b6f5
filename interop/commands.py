"""What each command of `python -m interop` does, once cli.py has parsed its line.

`run(args, raw)` looks the command up in `HANDLERS` (command -> handler) and
runs it with every terminating signal turned into KeyboardInterrupt. A handler
takes the parsed arguments and the raw command line and returns the exit
code; every refusal it raises (a manifest, scenario, usage, known-failures,
report or revision problem, a file the user named) is printed as one
`error:` line with exit 2, an interrupt as `interrupted` with exit 130.

The commands that run adapters (matrix, fuzz, smoke, bench, build, unit-tests,
errors) first discover them (`_adapters`): the adapters root's and each
`--adapter-dir`, a `PATH@REV` exported and built once, every suite a manifest
names a suite of this harness. The matrix command also turns its line into
suite runs (`_suite_runs`) and its options (`_matrix`).
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from interop import ROOT, revisions, shard
from interop.bench.run import BenchOptions, run_bench
from interop.bisect import bisect as bisect_command
from interop.contract.manifest import Adapter, ManifestError, discover
from interop.coverage.speccheck import requirements_command
from interop.fuzz.run import FuzzOptions, load_replay, run_fuzz
from interop.generate import generate_command
from interop.grid import AUTH_MODES, TRANSPORTS
from interop.known import KnownFailures, KnownFailuresError, unmatchable
from interop.known import load as load_known
from interop.pack import pack, unpack
from interop.replay import unit_tests
from interop.report.commands import (
    ReportCommandError,
    combine_command,
    diff_command,
    html_command,
    previous_command,
    summary_command,
)
from interop.report.repro import repro_command
from interop.results import error_table
from interop.runner import MatrixOptions, SuiteRun, UsageError, run_matrix, spec_schemas
from interop.runtime import interrupts
from interop.runtime.context import Timeouts
from interop.sdks import prepare as sdks_prepare
from interop.select import SelectedFiles, Selection, row_tags
from interop.smoke import smoke
from interop.suites import DECLARATIONS, SUITES
from interop.suites.base import ScenarioError, set_name

# A command's handler: the parsed arguments and the raw command line -> the exit code.
Handler = Callable[[argparse.Namespace, list[str]], int]


def run(args: argparse.Namespace, raw: list[str]) -> int:
    """Run the parsed command: every terminating signal is KeyboardInterrupt for the
    whole command (exit 130), a refusal one `error:` line (exit 2)."""
    with interrupts.handled():
        return _dispatch(args, raw)


def _dispatch(args: argparse.Namespace, raw: list[str]) -> int:
    """The command's handler, its refusals printed as `error: ...` (exit 2). An OSError
    naming no file (neither one the user named nor one the run writes) is a bug: raised."""
    try:
        return HANDLERS[args.command](args, raw)
    except (
        ManifestError,
        ScenarioError,
        UsageError,
        KnownFailuresError,
        ReportCommandError,
        ValueError,  # RevisionError, BisectError, PinsError too
        FileExistsError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.filename is None:  # not a file the user named or the run writes: a bug
            raise
        print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


# ---------------------------------------------------------------------------------------
# Commands on reports, files and revisions: no adapter discovered


def _report(args: argparse.Namespace, raw: list[str]) -> int:
    """`report combine|html|summary|previous` and `diff` (interop/report/commands.py)."""
    if args.command == "diff":
        return diff_command(
            args.old, args.new, baseline_optional=args.baseline_optional, as_json=args.json
        )
    if args.action == "combine":
        path = args.known_failures
        return combine_command(
            args.reports, args.output, load_known(path) if path.exists() else None
        )
    if args.action == "html":
        return html_command(args.reports, args.output, args.baseline)
    if args.action == "summary":
        return summary_command(args.reports, args.baseline)
    return previous_command(args.repository, args.workflow, args.artifact, args.output)


def _requirements(args: argparse.Namespace, raw: list[str]) -> int:
    return requirements_command(args.spec, args.pinned)


def _repro(args: argparse.Namespace, raw: list[str]) -> int:
    return repro_command(args.bundle.resolve(), args.client)


def _scenarios(args: argparse.Namespace, raw: list[str]) -> int:
    return generate_command(args.check)


def _sdks(args: argparse.Namespace, raw: list[str]) -> int:
    return sdks_prepare(args.pins, args.into, args.only)


def _clean(args: argparse.Namespace, raw: list[str]) -> int:
    """Remove the revisions `--adapter-dir PATH@REV` exported and built, each named."""
    for removed in revisions.clean():
        print(f"removed {removed}", file=sys.stderr)
    return 0


def _bisect(args: argparse.Namespace, raw: list[str]) -> int:
    rest = [a for a in args.matrix_args if a != "--"]
    return bisect_command(args.adapter_dir, args.good, args.bad, args.row, rest)


# ---------------------------------------------------------------------------------------
# Commands that run adapters


def _adapters(args: argparse.Namespace) -> dict[str, Adapter]:
    """The adapters of the command line: the adapters root's and each `--adapter-dir`
    (smoke's own adapter apart, it is the one checked), a revision (`PATH@REV`)
    exported and built once, then a folder like any; every suite a manifest names
    must be a suite of this harness (`_known_suites`)."""
    args.adapter_dir = [  # a revision: exported and built once, then a folder like any
        revisions.adapter_dir(d, d.rev) if d.rev else d for d in args.adapter_dir
    ]
    extra = [] if args.command == "smoke" else list(args.adapter_dir)
    adapters = discover(args.adapters_root, extra)
    _known_suites(adapters)
    return adapters


def _known_suites(adapters: dict[str, Adapter]) -> None:
    """Every suite an adapter's manifest names (extensions.suites, extensions.roles) is
    a suite of this harness: a misspelt name would otherwise leave a suite unrun."""
    for adapter in adapters.values():
        named = [("extensions.suites", s) for s in adapter.suites or ()]
        named += [("extensions.roles", s) for s in adapter.roles or {} if s != "*"]
        for field, suite in named:
            if suite not in DECLARATIONS:
                raise UsageError(
                    f"{adapter.manifest or adapter.directory}: {field} names {suite!r}, which is "
                    f"no suite of this harness (the suites: {', '.join(DECLARATIONS)})"
                )


def _select(adapters: dict[str, Adapter], names: list[str] | None, what: str) -> list[str]:
    """The adapters named (each once, in the order given), or all of them sorted;
    a ManifestError names the unknown ones."""
    if names is None:
        return sorted(adapters)
    unknown = [n for n in names if n not in adapters]
    if unknown:
        raise ManifestError(
            f"unknown {what}: {', '.join(unknown)} (known: {', '.join(sorted(adapters))})"
        )
    return list(dict.fromkeys(names))


def _fuzz(args: argparse.Namespace, raw: list[str]) -> int:
    """Differential fuzzing (interop/fuzz): two clients at least, one server, its
    profile declared by each; the seed drawn when none is given."""
    adapters = _adapters(args)
    pool = _select(adapters, args.adapters, "adapters")
    clients = _select({n: adapters[n] for n in pool}, args.clients, "clients")
    if len(clients) < 2:
        raise UsageError(
            f"differential fuzzing compares clients with each other; {len(clients)} selected "
            f"({', '.join(clients) or 'none'}): pass --clients with two or more"
        )
    server = args.server or pool[0]
    _select({n: adapters[n] for n in pool}, [server], "server")
    if args.transport == "stdio" and args.auth != "none":
        raise UsageError("stdio runs without authentication: use --auth none with stdio")
    for name in {*clients, server}:
        if args.profile not in adapters[name].profiles:
            raise UsageError(f"adapter {name!r} does not support the {args.profile!r} profile")
    replay = load_replay([p.resolve() for p in args.replay]) if args.replay else []
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    options = FuzzOptions(
        seed=seed,
        count=args.count,
        boundaries=tuple(dict.fromkeys(args.boundaries)),
        clients=clients,
        server=server,
        transport=args.transport,
        auth=args.auth,
        output=args.output.resolve(),
        batch_size=args.batch_size,
        jobs=args.jobs,
        timeouts=Timeouts(startup=args.startup_timeout, client=args.timeout),
        profile=args.profile,
        minimise=not args.no_minimise,
        quiet=args.quiet,
        replay=replay,
        argv=raw[1:],
    )
    return run_fuzz(options, adapters)


def _build(args: argparse.Namespace, raw: list[str]) -> int:
    """Build the adapters named (or all); with --pack, archive what their builds made
    instead; with --unpack, restore such an archive first."""
    adapters = _adapters(args)
    names = _select(adapters, args.adapters, "adapters")
    if args.pack is not None:
        count = pack([adapters[n] for n in names], args.pack.resolve())
        print(f"packed {count} build outputs into {args.pack}", file=sys.stderr)
        return 0
    if args.unpack is not None:
        count = unpack(args.unpack.resolve())
        print(f"unpacked {count} entries from {args.unpack}", file=sys.stderr)
    return _run_each(adapters, names, "build")


def _bench(args: argparse.Namespace, raw: list[str]) -> int:
    """The bench's parts (interop/bench), its matrix runs given the same adapters."""
    adapters = _adapters(args)
    passed_on = [d.argument() for d in args.adapter_dir]
    passed_on.append(f"--adapters-root={args.adapters_root.resolve()}")
    options = BenchOptions(
        adapters=_select(adapters, args.adapters, "adapters"),
        suites=list(SUITES) if not args.suite or "all" in args.suite else args.suite,
        jobs=args.jobs,
        samples=args.samples,
        parts=tuple(dict.fromkeys(args.parts)),
        output=args.output.resolve(),
        matrix_args=passed_on,
    )
    return run_bench(options, adapters)


def _unit_tests(args: argparse.Namespace, raw: list[str]) -> int:
    adapters = _adapters(args)
    return unit_tests(adapters, _select(adapters, args.adapters, "adapters"))


def _smoke(args: argparse.Namespace, raw: list[str]) -> int:
    """Smoke-check the one `--adapter-dir` against a reference server of the others
    (`--reference`, else python, else the first by name)."""
    adapters = _adapters(args)
    if len(args.adapter_dir) != 1:
        raise UsageError("smoke checks one adapter: pass exactly one --adapter-dir [NAME=]PATH")
    target = args.adapter_dir[0]
    directory = target.path.resolve()
    others = {n: a for n, a in adapters.items() if a.directory != directory}
    name = args.reference or ("python" if "python" in others else next(iter(sorted(others)), None))
    if name is not None and name not in others:
        raise UsageError(f"unknown --reference {name!r} (known: {', '.join(sorted(others))})")
    spec = spec_schemas(args.spec.resolve()) if args.spec is not None else None
    return smoke(target, others[name] if name else None, build=not args.no_build, spec=spec)


def _errors(args: argparse.Namespace, raw: list[str]) -> int:
    """The table of error classes (docs/errors.md), once the manifests are checked."""
    _adapters(args)
    print(error_table())
    return 0


BUILD_HEARTBEAT = 15.0  # seconds between "still building" lines of a quiet build


def _watched(name: str, key: str, command: list[str], cwd: Path) -> int:
    """Run one adapter's command; a quiet one (a cold cargo build takes minutes) gets a
    line every BUILD_HEARTBEAT seconds, and each its time at the end."""
    started = time.monotonic()
    child = subprocess.Popen(command, cwd=cwd)
    try:
        while True:
            try:
                code = child.wait(timeout=BUILD_HEARTBEAT)
                break
            except subprocess.TimeoutExpired:
                spent = time.monotonic() - started
                print(f"{name}: {key} still running ({spent:.0f}s)", file=sys.stderr, flush=True)
    finally:
        if child.poll() is None:  # interrupted: the command goes with us
            child.terminate()
            child.wait()
    spent = time.monotonic() - started
    verdict = "done" if code == 0 else f"failed (exit {code})"
    print(f"{name}: {key} {verdict} in {spent:.1f}s", file=sys.stderr, flush=True)
    return code


def _run_each(adapters: dict[str, Adapter], names: list[str], key: str) -> int:
    """Run each named adapter's `key` command in its folder (one without it is said
    and passed over); 1 when any failed, naming them."""
    failures = []
    for name in names:
        command = adapters[name].command(key)
        if command is None:
            print(f"{name}: no {key!r} command", file=sys.stderr)
            continue
        print(f"{name}: {' '.join(command)}", file=sys.stderr, flush=True)
        if _watched(name, key, list(command), adapters[name].directory) != 0:
            failures.append(name)
    if failures:
        print(f"{key} failed for: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------
# The matrix


def _matrix_command(args: argparse.Namespace, raw: list[str]) -> int:
    """The matrix run: its suite runs' trimmed copies are removed however it ends."""
    adapters = _adapters(args)
    pool = _select(adapters, args.adapters, "adapters")
    selection = Selection(tuple(args.scenario), tuple(args.tag))
    runs = _suite_runs(args.suite, args.scenarios, selection)
    try:
        return _matrix(args, adapters, pool, runs, selection)
    finally:
        for run in runs:
            if run.files is not None:
                run.files.close()


def _suite_runs(
    names: list[str] | None, scenarios: list[Path] | None, selection: Selection
) -> list[SuiteRun]:
    """The suites asked for (every suite for `all` or none named), each with its sets:
    `--scenarios` files belong to exactly one named suite. With a selection, the
    suites none of whose rows it selects are left out (UsageError: none at all)."""
    chosen = list(SUITES) if not names or "all" in names else list(dict.fromkeys(names))
    if scenarios and (not names or len(chosen) != 1):
        raise UsageError(
            "--scenarios needs exactly one --suite, the suite the files belong to "
            "(e.g. --suite core --scenarios FILE)"
        )
    runs: list[SuiteRun] = []
    made: list[SelectedFiles] = []  # every trimmed-copy folder, kept or not
    try:
        for name in chosen:
            suite, declared = SUITES[name](), DECLARATIONS[name]
            paths = [p.resolve() for p in (scenarios or declared.default_sets(ROOT))]
            if not selection.active:
                runs.append(SuiteRun(name, suite.load_sets(paths), paths=tuple(paths)))
                continue
            files = SelectedFiles() if declared.file_rows else None
            if files is not None:
                made.append(files)
            used = files.select(paths, selection) if files is not None else paths
            if not used:
                continue  # no file row selected: only its own rows (probes) could be
            run = SuiteRun(
                name, suite.load_sets(used), selection, row_tags(paths), files, tuple(paths)
            )
            if run.row_count():
                runs.append(run)
        if not runs:
            raise UsageError(
                f"no row of the suites {', '.join(chosen)} matches the selection "
                f"{_describe_selection(selection)}"
            )
    except BaseException:
        for files in made:
            files.close()
        raise
    kept = {id(run.files) for run in runs}
    for files in made:
        if id(files) not in kept:
            files.close()  # a suite left out: its copies are not needed
    return runs


def _describe_selection(selection: Selection) -> str:
    parts = [f"--scenario {g}" for g in selection.scenarios]
    parts += [f"--tag {t}" for t in selection.tags]
    return " ".join(parts)


def _matrix(
    args: argparse.Namespace,
    adapters: dict[str, Adapter],
    pool: list[str],
    runs: list[SuiteRun],
    selection: Selection,
) -> int:
    """The matrix run of the parsed command line."""
    options = MatrixOptions(
        suites=runs,
        clients=_select({n: adapters[n] for n in pool}, args.clients, "clients"),
        servers=_select({n: adapters[n] for n in pool}, args.servers, "servers"),
        transports=list(dict.fromkeys(args.transports)),
        auth=list(dict.fromkeys(args.auth)),
        jobs=args.jobs,
        timeouts=Timeouts(startup=args.startup_timeout, client=args.timeout),
        output=args.output.resolve(),
        profile=args.profile,
        quiet=args.quiet,
        server_reuse=not args.no_server_reuse,
        full_report=args.full_report,
        selection=selection,
        shard=_shard(args.shard),
        repeat=args.repeat,
        recheck=args.recheck,
        known=_known(args, runs),
        whole_grid=_whole_grid(args, adapters, pool, runs, selection),
        spec=args.spec.resolve() if args.spec is not None else None,
    )
    if not options.clients or not options.servers:
        raise ManifestError("no adapters found: nothing to run")
    return run_matrix(options, adapters)


def _shard(text: str | None) -> tuple[int, int] | None:
    """`--shard K/N` as (K, N); a UsageError when it is no such part."""
    if text is None:
        return None
    try:
        return shard.parse(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _known(args: argparse.Namespace, runs: list[SuiteRun]) -> KnownFailures | None:
    """known-failures.json, refused when a pattern can match no row of its suites."""
    if not args.known_failures.exists():
        return None
    known = load_known(args.known_failures)
    sets = {  # a suite's own sets (not --scenarios files, which other entries do not name)
        run.name: {part for d in run.describe() for part in str(d["name"]).split("+")}
        | {set_name(path) for path in run.paths}
        for run in runs
        if not args.scenarios
    }
    problems = unmatchable(known, tuple(SUITES), sets, TRANSPORTS, AUTH_MODES)
    if problems:
        raise UsageError(f"{args.known_failures}: " + "; ".join(problems) + " (reports/README.md)")
    return known


def _whole_grid(
    args: argparse.Namespace,
    adapters: dict[str, Adapter],
    pool: list[str],
    runs: list[SuiteRun],
    selection: Selection,
) -> bool:
    """Whether the run covers every suite, adapter, transport and auth mode, unselected."""
    return (
        [r.name for r in runs] == list(SUITES)
        and not args.scenarios
        and not selection.active
        and pool == sorted(adapters)
        and not args.clients
        and not args.servers
        and set(args.transports) == set(TRANSPORTS)
        and set(args.auth) == set(AUTH_MODES)
    )


HANDLERS: dict[str, Handler] = {
    "matrix": _matrix_command,
    "fuzz": _fuzz,
    "smoke": _smoke,
    "bisect": _bisect,
    "sdks": _sdks,
    "scenarios": _scenarios,
    "clean": _clean,
    "errors": _errors,
    "report": _report,
    "diff": _report,
    "requirements": _requirements,
    "repro": _repro,
    "bench": _bench,
    "build": _build,
    "unit-tests": _unit_tests,
}
