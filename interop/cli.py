"""Command line: argument parsing only. `python -m interop {matrix,build,unit-tests}`."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from interop import ROOT
from interop.adapters import Adapter, ManifestError, discover
from interop.grid import AUTH_MODES, TRANSPORTS
from interop.runner import MatrixOptions, UsageError, run_matrix
from interop.runtime import Timeouts
from interop.scenarios import ScenarioError, load_sets
from interop.suites import SUITES


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m interop", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    def adapter_options(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--adapter-dir",
            action="append",
            type=Path,
            default=[],
            metavar="PATH",
            help="an extra adapter directory (with adapter.json or interop/adapter.json)",
        )
        p.add_argument("--adapters", nargs="+", metavar="NAME", help="only these adapters")
        p.add_argument(
            "--adapters-root",
            type=Path,
            default=ROOT / "adapters",
            metavar="PATH",
            help="where to discover */adapter.json (default: this repository's adapters/)",
        )

    matrix = commands.add_parser("matrix", help="run a suite over the grid and write reports")
    adapter_options(matrix)
    matrix.add_argument("--suite", choices=sorted(SUITES), default="core")
    matrix.add_argument("--clients", nargs="+", metavar="NAME", help="default: every adapter")
    matrix.add_argument("--servers", nargs="+", metavar="NAME", help="default: every adapter")
    matrix.add_argument("--transports", nargs="+", choices=TRANSPORTS, default=list(TRANSPORTS))
    matrix.add_argument("--auth", nargs="+", choices=AUTH_MODES, default=list(AUTH_MODES))
    matrix.add_argument(
        "--scenarios",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="scenario files (default: the suite's sets)",
    )
    matrix.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    matrix.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="watchdog for one client run (default 120)",
    )
    matrix.add_argument("--startup-timeout", type=float, default=30.0, metavar="S")
    matrix.add_argument("--profile", choices=("strict", "compat"), default="strict")
    matrix.add_argument("--output", type=Path, default=ROOT / "reports" / "report.json")
    matrix.add_argument("--quiet", action="store_true", help="no progress lines")
    matrix.add_argument(
        "--no-server-reuse",
        action="store_true",
        help="start a fresh server for every client run, even where the adapter can be reused",
    )

    build = commands.add_parser("build", help="build every adapter (each adapter's `build`)")
    adapter_options(build)
    tests = commands.add_parser("unit-tests", help="run every adapter's own tests (`test`)")
    adapter_options(tests)
    return parser


def _select(adapters: dict[str, Adapter], names: list[str] | None, what: str) -> list[str]:
    if names is None:
        return sorted(adapters)
    unknown = [n for n in names if n not in adapters]
    if unknown:
        raise ManifestError(
            f"unknown {what}: {', '.join(unknown)} (known: {', '.join(sorted(adapters))})"
        )
    return list(dict.fromkeys(names))


def _run_each(adapters: dict[str, Adapter], names: list[str], key: str) -> int:
    failures = []
    for name in names:
        command = adapters[name].command(key)
        if command is None:
            print(f"{name}: no {key!r} command", file=sys.stderr)
            continue
        print(f"{name}: {' '.join(command)}", file=sys.stderr, flush=True)
        if subprocess.run(list(command), cwd=adapters[name].directory).returncode != 0:
            failures.append(name)
    if failures:
        print(f"{key} failed for: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        adapters = discover(args.adapters_root, [p.resolve() for p in args.adapter_dir])
        if args.command == "build":
            return _run_each(adapters, _select(adapters, args.adapters, "adapters"), "build")
        if args.command == "unit-tests":
            return _run_each(adapters, _select(adapters, args.adapters, "adapters"), "test")
        pool = _select(adapters, args.adapters, "adapters")
        suite = SUITES[args.suite]()
        paths = args.scenarios or suite.default_sets(ROOT)
        options = MatrixOptions(
            suite=args.suite,
            clients=_select({n: adapters[n] for n in pool}, args.clients, "clients"),
            servers=_select({n: adapters[n] for n in pool}, args.servers, "servers"),
            transports=list(dict.fromkeys(args.transports)),
            auth=list(dict.fromkeys(args.auth)),
            sets=load_sets([p.resolve() for p in paths]),
            jobs=args.jobs,
            timeouts=Timeouts(startup=args.startup_timeout, client=args.timeout),
            output=args.output.resolve(),
            profile=args.profile,
            quiet=args.quiet,
            server_reuse=not args.no_server_reuse,
        )
        if not options.clients or not options.servers:
            raise ManifestError("no adapters found: nothing to run")
        return run_matrix(options, adapters)
    except (ManifestError, ScenarioError, UsageError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
