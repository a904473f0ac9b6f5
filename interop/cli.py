"""Command line: argument parsing only. `python -m interop {matrix,fuzz,build,unit-tests,...}`.

One function per command's parser; what a command does is interop/commands.py's
(`commands.run` dispatches the parsed line to its handler). Imported here besides:
what the options' defaults and choices name.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from interop import ROOT, __version__, commands
from interop.bench.run import PARTS as BENCH_PARTS
from interop.contract.manifest import AdapterDir
from interop.coverage import REQUIREMENTS_FILE
from interop.fuzz.generate import BOUNDARIES
from interop.grid import AUTH_MODES, TRANSPORTS
from interop.suites import SUITES

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def main(argv: list[str] | None = None) -> int:
    """Parse the command line (`argv`, default sys.argv[1:]) and run its command
    (interop/commands.py); the exit code."""
    raw = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(raw)
    return commands.run(args, raw)


def _prog() -> str:
    """How the user called us: `ahp-interop` (the installed command) or `python -m interop`."""
    called = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "ahp-interop" if called == "ahp-interop" else "python -m interop"


def _parser() -> argparse.ArgumentParser:
    """Every command's parser, in the order `--help` lists them."""
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="The AHP Interop Matrix (also installed as `ahp-interop`). See README.md.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in (
        _matrix,
        _fuzz,
        _smoke,
        _bisect,
        _sdks,
        _scenarios,
        _clean,
        _errors,
        _report,
        _diff,
        _requirements,
        _repro,
        _bench,
        _build,
        _unit_tests,
    ):
        add(subparsers)
    return parser


def _adapter_options(p: argparse.ArgumentParser) -> None:
    """Which adapters: extra folders (or revisions), a subset by name, the root searched."""
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


def _run_options(p: argparse.ArgumentParser, timeout_help: str) -> None:
    """Workers, watchdogs and trust profile: every command that runs adapters."""
    p.add_argument(
        "--jobs",
        type=_positive_int,
        default=os.cpu_count() or 1,
        help="CPU slots: a job of a suite that mostly waits holds half of one "
        "(docs/bench.md; default: the number of CPUs)",
    )
    p.add_argument("--timeout", type=_positive_float, default=120.0, metavar="S", help=timeout_help)
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


def _matrix(subparsers: Subparsers) -> None:
    """`matrix`: which adapters and suites, which rows, how to run them, what to write."""
    matrix = subparsers.add_parser("matrix", help="run suites over the grid and write reports")
    _adapter_options(matrix)
    _matrix_grid(matrix)
    _matrix_rows(matrix)
    _run_options(matrix, "watchdog for one client run (default 120)")
    _matrix_output(matrix)


def _matrix_grid(matrix: argparse.ArgumentParser) -> None:
    """The suites and the grid: the spec's schemas, clients, servers, transports, auth
    modes."""
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


def _matrix_rows(matrix: argparse.ArgumentParser) -> None:
    """Which rows, and how often: scenario files, selection, known failures, repeats,
    rechecks, shard."""
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


def _matrix_output(matrix: argparse.ArgumentParser) -> None:
    """What the run writes and prints, and whether servers are reused."""
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


def _fuzz(subparsers: Subparsers) -> None:
    """`fuzz`: differential fuzzing over random core rows (docs/fuzzing.md)."""
    fuzz = subparsers.add_parser(
        "fuzz",
        help="differential fuzzing: random core rows, every client, compare pairwise",
        description="Generate random core scenarios (no expectations), run every selected "
        "client on them against one server adapter, and report every row on which two "
        "clients differ, grouped by the keys that differ, each class minimised. "
        "See docs/fuzzing.md.",
    )
    _adapter_options(fuzz)
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
    _run_options(fuzz, "watchdog for one client process (one batch; default 120)")
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


def _smoke(subparsers: Subparsers) -> None:
    """`smoke`: one new adapter checked end to end, with fixes."""
    smoke = subparsers.add_parser(
        "smoke",
        help="bring up a new adapter: check its manifest, build, server and client, with fixes",
    )
    _adapter_options(smoke)
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


def _bisect(subparsers: Subparsers) -> None:
    """`bisect`: the first commit of an adapter where one row fails."""
    bisect = subparsers.add_parser(
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


def _sdks(subparsers: Subparsers) -> None:
    """`sdks prepare`: the pinned upstream SDKs cloned and built."""
    sdks = subparsers.add_parser("sdks", help="the pinned upstream SDKs (sdk-revisions.json)")
    sdk_actions = sdks.add_subparsers(dest="action", required=True)
    prepare = sdk_actions.add_parser(
        "prepare", help="clone each pinned SDK at its revision and build it; write adapter-args"
    )
    prepare.add_argument("--pins", type=Path, default=ROOT / "sdk-revisions.json", metavar="FILE")
    prepare.add_argument("--into", type=Path, required=True, metavar="DIR")
    prepare.add_argument("--only", nargs="+", metavar="NAME", help="only these SDKs")


def _scenarios(subparsers: Subparsers) -> None:
    """`scenarios`: every suite's own scenario files written (or checked)."""
    scenarios = subparsers.add_parser(
        "scenarios", help="write every suite's own scenario files (its declared generator)"
    )
    scenarios.add_argument(
        "--check", action="store_true", help="write nothing; 1 unless every file is as written"
    )


def _clean(subparsers: Subparsers) -> None:
    """`clean`: the revisions cache removed."""
    subparsers.add_parser(
        "clean",
        help="remove the revisions --adapter-dir PATH@REV exported and built (the cache), "
        "and nothing else",
    )


def _errors(subparsers: Subparsers) -> None:
    """`errors`: the table of error classes."""
    errors = subparsers.add_parser(
        "errors", help="print the table of error classes (docs/errors.md)"
    )
    _adapter_options(errors)


def _report(subparsers: Subparsers) -> None:
    """`report combine|html|summary|previous`."""
    report = subparsers.add_parser("report", help="combine, render or fetch reports")
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


def _diff(subparsers: Subparsers) -> None:
    """`diff`: what changed between two reports."""
    differ = subparsers.add_parser("diff", help="what changed between two reports; 1 on regression")
    differ.add_argument("old", type=Path, metavar="OLD.json")
    differ.add_argument("new", type=Path, metavar="NEW.json")
    differ.add_argument("--json", action="store_true", help="print the diff as JSON")
    differ.add_argument(
        "--baseline-optional",
        action="store_true",
        help="a missing OLD.json is no error (the first nightly has no baseline)",
    )


def _requirements(subparsers: Subparsers) -> None:
    """`requirements`: the pinned requirement table against a spec checkout."""
    pinned = subparsers.add_parser(
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


def _repro(subparsers: Subparsers) -> None:
    """`repro`: a repro bundle's captured server answer replayed to a client."""
    repro = subparsers.add_parser(
        "repro",
        help="replay a failed core row's captured server answer (its repro bundle) to a client",
    )
    repro.add_argument("bundle", type=Path, metavar="BUNDLE", help="a repro bundle's folder")
    repro.add_argument(
        "--client",
        metavar="NAME",
        help="the client to replay to (default: the bundle's own client)",
    )


def _bench(subparsers: Subparsers) -> None:
    """`bench`: the suites timed beside the physical floor."""
    bench = subparsers.add_parser(
        "bench",
        help="time the suites over the grid beside the physical floor (reports/bench.json)",
    )
    _adapter_options(bench)
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


def _build(subparsers: Subparsers) -> None:
    """`build`: every adapter built, or its outputs packed or unpacked."""
    build = subparsers.add_parser("build", help="build every adapter (each adapter's `build`)")
    _adapter_options(build)
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


def _unit_tests(subparsers: Subparsers) -> None:
    """`unit-tests`: each adapter's own tests, then its replay of the core sets."""
    tests = subparsers.add_parser(
        "unit-tests",
        help="run every adapter's own tests (`test`), then judge its `replay` of the core sets",
    )
    _adapter_options(tests)


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
