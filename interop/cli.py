"""Command line: argument parsing only. `python -m interop {matrix,fuzz,build,unit-tests,...}`."""

from __future__ import annotations

import argparse
import math
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from interop import ROOT, __version__, revisions, shard
from interop.bench.run import PARTS as BENCH_PARTS
from interop.bench.run import BenchOptions, run_bench
from interop.bisect import bisect as bisect_command
from interop.contract.manifest import Adapter, AdapterDir, ManifestError, discover
from interop.coverage import REQUIREMENTS_FILE
from interop.coverage.speccheck import requirements_command
from interop.fuzz.generate import BOUNDARIES
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


def _prog() -> str:
    """How the user called us: `ahp-interop` (the installed command) or `python -m interop`."""
    called = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "ahp-interop" if called == "ahp-interop" else "python -m interop"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="The AHP Interop Matrix (also installed as `ahp-interop`). See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def adapter_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--adapter-dir",
            action="append",
            type=_adapter_dir,
            default=[],
            metavar="[NAME=]PATH[@REV]",
            help="an extra adapter directory (with adapter.json, or an SDK checkout with "
            "interop/adapter.json), named NAME (default: its manifest's language); with @REV, "
            "that git revision of it, exported and built once into the cache, named NAME@REV",
        )
        p.add_argument("--adapters", nargs="+", metavar="NAME", help="only these adapters")
        p.add_argument(
            "--adapters-root",
            type=Path,
            default=ROOT / "adapters",
            metavar="PATH",
            help="where to discover */adapter.json (default: this repository's adapters/)",
        )

    def run_options(p: argparse.ArgumentParser, timeout_help: str) -> None:
        """Workers, watchdogs and trust profile: every command that runs adapters."""
        p.add_argument(
            "--jobs",
            type=_positive_int,
            default=os.cpu_count() or 1,
            help="CPU slots: a job of a suite that mostly waits holds half of one "
            "(docs/bench.md; default: the number of CPUs)",
        )
        p.add_argument(
            "--timeout", type=_positive_float, default=120.0, metavar="S", help=timeout_help
        )
        p.add_argument(
            "--startup-timeout",
            type=_positive_float,
            default=30.0,
            metavar="S",
            help="watchdog for a server's readiness (default 30)",
        )
        p.add_argument(
            "--profile",
            choices=("strict", "compat"),
            default="strict",
            help="trust profile (docs/CONTRACT.md): strict X.509 and ES256, or the upstream wire",
        )

    matrix = commands.add_parser("matrix", help="run suites over the grid and write reports")
    adapter_options(matrix)
    matrix.add_argument(
        "--suite",
        nargs="+",
        choices=[*SUITES, "all"],
        metavar="SUITE",
        help=f"one or more of {', '.join(SUITES)}, or all (default: all)",
    )
    matrix.add_argument(
        "--spec",
        type=Path,
        metavar="PATH",
        help="a checkout of the spec repository (agenthooksprotocol/agent-hooks-protocol): "
        "contract v1 adapters get its schema/draft as schemaDir and AHP_SCHEMA_DIR "
        "(default: this project's schemas, with a warning)",
    )
    matrix.add_argument("--clients", nargs="+", metavar="NAME", help="default: every adapter")
    matrix.add_argument("--servers", nargs="+", metavar="NAME", help="default: every adapter")
    matrix.add_argument(
        "--transports",
        nargs="+",
        choices=TRANSPORTS,
        default=list(TRANSPORTS),
        help="default: all",
    )
    matrix.add_argument(
        "--auth", nargs="+", choices=AUTH_MODES, default=list(AUTH_MODES), help="default: all"
    )
    matrix.add_argument(
        "--scenarios",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="scenario files of the one suite named (default: each suite's own sets)",
    )
    matrix.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="GLOB",
        help="only rows whose id matches (fnmatch; repeatable): re-run one row",
    )
    matrix.add_argument(
        "--known-failures",
        type=Path,
        default=ROOT / "known-failures.json",
        metavar="FILE",
        help="rows expected to fail, each with a reason and an issue (default: "
        "known-failures.json; see reports/README.md)",
    )
    matrix.add_argument(
        "--repeat",
        type=_positive_int,
        default=1,
        metavar="N",
        help="run each combination N times; rows whose verdict changed are reported flaky "
        "(never retried into a pass)",
    )
    matrix.add_argument(
        "--recheck",
        type=_count,
        default=1,
        metavar="N",
        help="run a combination with an unexpected failed row again N times, alone and with "
        "only those rows; a row that passes then is reported flaky, never passed "
        "(default 1; 0: never)",
    )
    matrix.add_argument(
        "--shard",
        metavar="K/N",
        help="run only the K-th of N parts of the grid, split evenly by cost "
        "(combine the N reports with `python -m interop report combine`)",
    )
    matrix.add_argument(
        "--tag",
        action="append",
        default=[],
        metavar="TAG",
        help="only rows carrying this tag (repeatable; scenario files' `tags`)",
    )
    run_options(matrix, "watchdog for one client run (default 120)")
    matrix.add_argument(
        "--output",
        type=Path,
        default=ROOT / "reports" / "report.json",
        metavar="FILE",
        help="the JSON report; .xml, .html, .timings.json and -logs/ go beside it "
        "(default reports/report.json)",
    )
    matrix.add_argument(
        "--full-report",
        action="store_true",
        help="keep every row's actual in the report (passed rows keep a digest otherwise)",
    )
    matrix.add_argument("--quiet", action="store_true", help="no progress lines")
    matrix.add_argument(
        "--no-server-reuse",
        action="store_true",
        help="start a fresh server for every client run, even where the adapter can be reused",
    )

    fuzz = commands.add_parser(
        "fuzz",
        help="differential fuzzing: random core rows, every client, compare pairwise",
        description="Generate random core scenarios (no expectations), run every selected "
        "client on them against one server adapter, and report every row on which two "
        "clients differ, grouped by the keys that differ, each class minimised. "
        "See docs/fuzzing.md.",
    )
    adapter_options(fuzz)
    fuzz.add_argument("--seed", type=int, help="the run's seed (default: a fresh one, printed)")
    fuzz.add_argument("--count", type=_positive_int, default=1000, help="rows (default 1000)")
    fuzz.add_argument(
        "--boundaries",
        nargs="+",
        choices=BOUNDARIES,
        default=list(BOUNDARIES),
        metavar="EVENT",
        help="core boundaries to draw rows from (default: all nine)",
    )
    fuzz.add_argument("--clients", nargs="+", metavar="NAME", help="default: every adapter")
    fuzz.add_argument("--server", metavar="NAME", help="server adapter (default: the first)")
    fuzz.add_argument("--transport", choices=TRANSPORTS, default="http")
    fuzz.add_argument("--auth", choices=AUTH_MODES, default="none")
    fuzz.add_argument(
        "--batch-size",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="rows per client process (default 1000), so no run trips its watchdog",
    )
    run_options(fuzz, "watchdog for one client process (one batch; default 120)")
    fuzz.add_argument("--output", type=Path, default=ROOT / "reports" / "fuzz", metavar="DIR")
    fuzz.add_argument("--no-minimise", action="store_true", help="report classes unshrunk")
    fuzz.add_argument(
        "--replay",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="run the rows of these scenario files (e.g. disagreement files) instead",
    )
    fuzz.add_argument("--quiet", action="store_true", help="no progress lines")

    smoke = commands.add_parser(
        "smoke",
        help="bring up a new adapter: check its manifest, build, server and client, with fixes",
    )
    adapter_options(smoke)
    smoke.add_argument(
        "--reference",
        metavar="NAME",
        help="the server the client is checked against (default: python, else the first other)",
    )
    smoke.add_argument("--no-build", action="store_true", help="do not run its build command")
    smoke.add_argument(
        "--spec",
        type=Path,
        metavar="PATH",
        help="a checkout of the spec repository: a contract v1 adapter gets its schema/draft "
        "(as in matrix)",
    )

    bisect = commands.add_parser(
        "bisect",
        help="find the first commit of an adapter where one row fails (build failures skip)",
    )
    bisect.add_argument(
        "--adapter-dir", type=_adapter_dir, required=True, metavar="[NAME=]PATH",
        help="the adapter in its git checkout; NAME is how --row names it",
    )  # fmt: skip
    bisect.add_argument("--good", required=True, metavar="REV", help="a revision that passes")
    bisect.add_argument("--bad", required=True, metavar="REV", help="a revision that fails")
    bisect.add_argument(
        "--row", required=True, metavar="ROW-PATH",
        help="suite/set/client->server/transport/auth/id, as reports name rows",
    )  # fmt: skip
    bisect.add_argument(
        "matrix_args", nargs=argparse.REMAINDER, metavar="-- MATRIX-OPTIONS",
        help="options for each run after --, e.g. -- --adapter-dir peer=../peer --profile compat",
    )  # fmt: skip
    sdks = commands.add_parser("sdks", help="the pinned upstream SDKs (sdk-revisions.json)")
    sdk_actions = sdks.add_subparsers(dest="action", required=True)
    prepare = sdk_actions.add_parser(
        "prepare", help="clone each pinned SDK at its revision and build it; write adapter-args"
    )
    prepare.add_argument("--pins", type=Path, default=ROOT / "sdk-revisions.json", metavar="FILE")
    prepare.add_argument("--into", type=Path, required=True, metavar="DIR")
    prepare.add_argument("--only", nargs="+", metavar="NAME", help="only these SDKs")
    scenarios = commands.add_parser(
        "scenarios", help="write every suite's own scenario files (its declared generator)"
    )
    scenarios.add_argument(
        "--check", action="store_true", help="write nothing; 1 unless every file is as written"
    )
    commands.add_parser(
        "clean",
        help="remove the revisions --adapter-dir PATH@REV exported and built (the cache), "
        "and nothing else",
    )

    errors = commands.add_parser("errors", help="print the table of error classes (docs/errors.md)")
    adapter_options(errors)

    report = commands.add_parser("report", help="combine, render or fetch reports")
    actions = report.add_subparsers(dest="action", required=True)
    combining = actions.add_parser("combine", help="merge shard reports into the whole run's")
    combining.add_argument("reports", nargs="+", type=Path, metavar="SHARD.json")
    combining.add_argument("--output", type=Path, required=True, metavar="FILE")
    combining.add_argument(
        "--known-failures",
        type=Path,
        default=ROOT / "known-failures.json",
        metavar="FILE",
        help="default: known-failures.json",
    )
    page = actions.add_parser("html", help="render one self-contained page")
    page.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    page.add_argument("--output", "-o", type=Path, required=True, metavar="FILE")
    page.add_argument("--baseline", type=Path, metavar="OLD.json", help="show what changed")
    summary = actions.add_parser("summary", help="the report as Markdown (a CI job summary)")
    summary.add_argument("reports", nargs="+", type=Path, metavar="REPORT.json")
    summary.add_argument("--baseline", type=Path, metavar="OLD.json", help="list regressions")
    previous = actions.add_parser(
        "previous", help="download the previous successful nightly's report (GitHub CLI)"
    )
    previous.add_argument("--repository", required=True, metavar="OWNER/NAME")
    previous.add_argument("--workflow", default="nightly.yml")
    previous.add_argument("--artifact", default="report")
    previous.add_argument("--output", type=Path, required=True, metavar="DIR")
    differ = commands.add_parser("diff", help="what changed between two reports; 1 on regression")
    differ.add_argument("old", type=Path, metavar="OLD.json")
    differ.add_argument("new", type=Path, metavar="NEW.json")
    differ.add_argument("--json", action="store_true", help="print the diff as JSON")
    differ.add_argument(
        "--baseline-optional",
        action="store_true",
        help="a missing OLD.json is no error (the first nightly has no baseline)",
    )
    pinned = commands.add_parser(
        "requirements",
        help="check the pinned requirement table against a spec checkout; 1 on any drift",
    )
    pinned.add_argument(
        "--spec",
        type=Path,
        required=True,
        metavar="PATH",
        help="a checkout of the spec repository (spec/draft/requirements.json and its documents)",
    )
    pinned.add_argument(
        "--pinned",
        type=Path,
        default=REQUIREMENTS_FILE,
        metavar="FILE",
        help="the pinned table (default: interop/coverage/requirements.json)",
    )
    repro = commands.add_parser(
        "repro",
        help="replay a failed core row's captured server answer (its repro bundle) to a client",
    )
    repro.add_argument("bundle", type=Path, metavar="BUNDLE", help="a repro bundle's folder")
    repro.add_argument(
        "--client",
        metavar="NAME",
        help="the client to replay to (default: the bundle's own client)",
    )
    bench = commands.add_parser(
        "bench",
        help="time the suites over the grid beside the physical floor (reports/bench.json)",
    )
    adapter_options(bench)
    bench.add_argument(
        "--suite",
        nargs="+",
        choices=[*SUITES, "all"],
        metavar="SUITE",
        help=f"the suites of the `suites` part: one or more of {', '.join(SUITES)}, or all "
        "(default: all)",
    )
    bench.add_argument(
        "--parts",
        nargs="+",
        choices=BENCH_PARTS,
        default=list(BENCH_PARTS),
        help=f"what to measure (default: all of {', '.join(BENCH_PARTS)})",
    )
    bench.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="CPU slots of the matrix runs (as matrix --jobs; default: the number of CPUs)",
    )
    bench.add_argument(
        "--samples",
        type=_positive_int,
        default=2,
        help="how many times the `jobs` part runs the core suite with --jobs and with "
        "--jobs 1, alternately; the speed-up is the ratio of the fastest of each "
        "(default: 2)",
    )
    bench.add_argument(
        "--output", type=Path, default=ROOT / "reports" / "bench.json", metavar="FILE"
    )
    build = commands.add_parser("build", help="build every adapter (each adapter's `build`)")
    adapter_options(build)
    packing = build.add_mutually_exclusive_group()
    packing.add_argument(
        "--pack",
        type=Path,
        metavar="FILE",
        help="instead of building, archive what the builds made (build once, run in many jobs)",
    )
    packing.add_argument(
        "--unpack", type=Path, metavar="FILE", help="restore an archive --pack made, then build"
    )
    tests = commands.add_parser(
        "unit-tests",
        help="run every adapter's own tests (`test`), then judge its `replay` of the core sets",
    )
    adapter_options(tests)
    return parser


def _adapter_dir(text: str) -> AdapterDir:
    try:
        return AdapterDir.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive whole number, e.g. 4, not {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a whole number (0 or more), not {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive number of seconds, e.g. 30, not {text!r}"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


def _fuzz(args: argparse.Namespace, adapters: dict[str, Adapter], argv: list[str]) -> int:
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
        argv=argv,
    )
    return run_fuzz(options, adapters)


def _bench(args: argparse.Namespace, adapters: dict[str, Adapter]) -> int:
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


def _smoke(args: argparse.Namespace, adapters: dict[str, Adapter]) -> int:
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


def _select(adapters: dict[str, Adapter], names: list[str] | None, what: str) -> list[str]:
    if names is None:
        return sorted(adapters)
    unknown = [n for n in names if n not in adapters]
    if unknown:
        raise ManifestError(
            f"unknown {what}: {', '.join(unknown)} (known: {', '.join(sorted(adapters))})"
        )
    return list(dict.fromkeys(names))


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


def main(argv: list[str] | None = None) -> int:
    raw = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(raw)
    with interrupts.handled():
        return _main(args, raw)


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


def _report(args: argparse.Namespace) -> int:
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


def _shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        return shard.parse(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _describe_selection(selection: Selection) -> str:
    parts = [f"--scenario {g}" for g in selection.scenarios]
    parts += [f"--tag {t}" for t in selection.tags]
    return " ".join(parts)


def _main(args: argparse.Namespace, raw: list[str]) -> int:
    try:
        if args.command in ("report", "diff"):
            return _report(args)
        if args.command == "requirements":
            return requirements_command(args.spec, args.pinned)
        if args.command == "repro":
            return repro_command(args.bundle.resolve(), args.client)
        if args.command == "scenarios":
            return generate_command(args.check)
        if args.command == "sdks":
            return sdks_prepare(args.pins, args.into, args.only)
        if args.command == "clean":
            for removed in revisions.clean():
                print(f"removed {removed}", file=sys.stderr)
            return 0
        if args.command == "bisect":
            rest = [a for a in args.matrix_args if a != "--"]
            return bisect_command(args.adapter_dir, args.good, args.bad, args.row, rest)
        args.adapter_dir = [  # a revision: exported and built once, then a folder like any
            revisions.adapter_dir(d, d.rev) if d.rev else d for d in args.adapter_dir
        ]
        extra = [] if args.command == "smoke" else list(args.adapter_dir)
        adapters = discover(args.adapters_root, extra)
        _known_suites(adapters)
        if args.command == "fuzz":
            return _fuzz(args, adapters, raw[1:])
        if args.command == "build":
            names = _select(adapters, args.adapters, "adapters")
            if args.pack is not None:
                count = pack([adapters[n] for n in names], args.pack.resolve())
                print(f"packed {count} build outputs into {args.pack}", file=sys.stderr)
                return 0
            if args.unpack is not None:
                count = unpack(args.unpack.resolve())
                print(f"unpacked {count} entries from {args.unpack}", file=sys.stderr)
            return _run_each(adapters, names, "build")
        if args.command == "bench":
            return _bench(args, adapters)
        if args.command == "unit-tests":
            return unit_tests(adapters, _select(adapters, args.adapters, "adapters"))
        if args.command == "smoke":
            return _smoke(args, adapters)
        if args.command == "errors":
            print(error_table())
            return 0
        pool = _select(adapters, args.adapters, "adapters")
        selection = Selection(tuple(args.scenario), tuple(args.tag))
        runs = _suite_runs(args.suite, args.scenarios, selection)
        try:
            return _matrix(args, adapters, pool, runs, selection)
        finally:
            for run in runs:
                if run.files is not None:
                    run.files.close()
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
