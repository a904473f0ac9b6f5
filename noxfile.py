"""Entry points of the AHP Interop Matrix.

Every session is usable on its own and reuses its environment: the pinned
requirements are installed only when `requirements.lock` or `pyproject.toml`
changed since the last install (a stamp in the environment records their hash).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nox

ROOT = Path(__file__).parent
nox.options.reuse_venv = "yes"
nox.options.default_venv_backend = "venv"  # the standard library's; nothing to download
nox.options.sessions = ["tests"]
PYTHON = "3.11"
WORKFLOWS = ROOT / ".github" / "workflows"
SCENARIO_FILES = ("scenarios/core.json", "scenarios/upstream/scenarios.json")


def _install(session: nox.Session, lock: str = "requirements.lock") -> None:
    """Install the harness and its pinned dependencies, once per lock change.

    `requirements.lock` pins what running the matrix needs; `requirements-dev.lock`
    adds the tools of the tests and the linters (both made by pip-compile, see
    their headers).
    """
    digest = hashlib.sha256()
    for name in (lock, "pyproject.toml"):
        digest.update((ROOT / name).read_bytes())
    stamp = Path(session.virtualenv.location) / ".ahp-install-stamp"
    if not stamp.exists() or stamp.read_text() != digest.hexdigest():
        session.install("--require-hashes", "-r", str(ROOT / lock))
        session.install("--no-deps", "-e", str(ROOT))
        stamp.write_text(digest.hexdigest())
    # The harness is installed editable: its modules are compiled here, once, so a
    # machine with PYTHONDONTWRITEBYTECODE does not compile them at every start
    # (importing interop.cli: 0.87 -> 0.54 s at every matrix run).
    session.run("python", "-m", "compileall", "-q", "interop", silent=True)


def _adapter_dirs(posargs: list[str]) -> list[str]:
    """The `--adapter-dir PATH` arguments among a session's posargs, to build them too."""
    found: list[str] = []
    for index, value in enumerate(posargs):
        if value == "--adapter-dir" and index + 1 < len(posargs):
            found += ["--adapter-dir", posargs[index + 1]]
        elif value.startswith("--adapter-dir="):
            found.append(value)
    return found


def _actionlint(session: nox.Session) -> str:
    """actionlint, built from source once per go.sum (tools/actionlint pins it)."""
    module = ROOT / "tools" / "actionlint"
    digest = hashlib.sha256((module / "go.sum").read_bytes()).hexdigest()[:16]
    binary = ROOT / ".nox" / "actionlint" / f"actionlint-{digest}"
    if not binary.exists():
        binary.parent.mkdir(parents=True, exist_ok=True)
        with session.chdir(module):
            session.run(
                "go",
                "build",
                "-o",
                str(binary),
                "github.com/rhysd/actionlint/cmd/actionlint",
                external=True,
            )
        session.chdir(ROOT)
    return str(binary)


def _check_scenarios(session: nox.Session) -> None:
    session.run("python", "tools/check_conformance.py", "--scenarios", *SCENARIO_FILES)


def _build_adapters(session: nox.Session) -> None:
    session.run("python", "-m", "interop", "build", *_adapter_dirs(session.posargs))


def _lint_adapters(session: nox.Session) -> None:
    """Each adapter's own linters, with its own configuration (built first)."""
    session.run("python", "-m", "interop", "build", "--adapters", "python", "typescript")
    python = "adapters/python"
    session.run("ruff", "check", "--no-cache", python)
    session.run("ruff", "format", "--check", "--no-cache", python)
    session.run(
        "mypy",
        "--config-file",
        f"{python}/mypy.ini",
        "--python-executable",
        f"{python}/.venv/bin/python",
        f"{python}/ahp_py",
    )
    # its layers: sdk < contract < suites, no suite importing another, no cycle
    adapter_path = {"PYTHONPATH": str(ROOT / python)}
    session.run("lint-imports", "--no-cache", f"{python}/.importlinter", env=adapter_path)
    with session.chdir(ROOT / "adapters" / "typescript"):  # eslint, tsc, dependency-cruiser
        session.run("npm", "run", "lint", "--silent", external=True)
    # the Go and Rust adapters' layers and cycles, each checked by a test of its own
    with session.chdir(ROOT / "adapters" / "go"):
        session.run(
            "go", "test", "-count=1", "-run", "^TestLayering$|^TestViolations$", ".", external=True
        )
    with session.chdir(ROOT / "adapters" / "rust"):
        target = {"CARGO_TARGET_DIR": str(ROOT / "adapters" / "rust" / "build" / "target")}
        session.run(
            "cargo", "test", "--locked", "--release", "--quiet", "-p", "ahp-rust",
            "--test", "layering", external=True, env=target,
        )  # fmt: skip
    session.chdir(ROOT)


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Build every adapter (incremental: a second run with no change does nothing)."""
    _install(session)
    session.run("python", "-m", "interop", "build", *session.posargs)


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """`python -m interop report combine|html|previous ...` (arguments after `--`)."""
    _install(session)
    session.run("python", "-m", "interop", "report", *session.posargs)


@nox.session(python=PYTHON)
def diff(session: nox.Session) -> None:
    """`python -m interop diff OLD.json NEW.json`: exits 1 on a regression."""
    _install(session)
    session.run("python", "-m", "interop", "diff", *session.posargs)


@nox.session(python=PYTHON)
def matrix(session: nox.Session) -> None:
    """Build, then run the suites; arguments after `--` go to `python -m interop matrix`."""
    _install(session)
    _build_adapters(session)
    session.run("python", "-m", "interop", "matrix", *session.posargs)


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """Build, then differential fuzzing of the clients; arguments go to `python -m interop fuzz`."""
    _install(session)
    _build_adapters(session)
    session.run("python", "-m", "interop", "fuzz", *session.posargs)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Build, then time the suites beside the floor; arguments go to `python -m interop bench`."""
    _install(session)
    _build_adapters(session)
    session.run("python", "-m", "interop", "bench", *session.posargs)


@nox.session(python=PYTHON)
def schemas(session: nox.Session) -> None:
    """Check the canonical schemas against the upstream golden fixtures."""
    _install(session)
    session.run("python", "tools/check_conformance.py", "--fixtures", "scenarios/upstream/fixtures")


@nox.session(python=PYTHON)
def scenarios(session: nox.Session) -> None:
    """Regenerate the scenario files; `-- --check` verifies them byte for byte."""
    _install(session)
    session.run("python", "-m", "interop", "scenarios", *session.posargs)
    _check_scenarios(session)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff and mypy over the harness, the tools and the Python adapter; tsc and eslint
    over the TypeScript adapter."""
    _install(session, "requirements-dev.lock")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")
    session.run("lint-imports", "--no-cache")  # the layers: pyproject.toml [tool.importlinter]
    _lint_adapters(session)
    workflows = sorted(map(str, WORKFLOWS.glob("*.yml")))
    session.run(_actionlint(session), "-no-color", *workflows, external=True)


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """Everything that proves the project works."""
    _install(session, "requirements-dev.lock")
    session.run("python", "tools/check_conformance.py", "--fixtures", "scenarios/upstream/fixtures")
    session.run("python", "-m", "interop", "scenarios", "--check")
    _check_scenarios(session)
    _build_adapters(session)
    session.run("python", "-m", "interop", "unit-tests")
    session.run("pytest", *session.posargs)
    # A fixed-seed fuzz budget: any disagreement between the clients fails the tests.
    session.run(
        "python",
        "-m",
        "interop",
        "fuzz",
        "--seed",
        "20261201",
        "--count",
        "400",
        "--output",
        "reports/smoke/fuzz",
        "--quiet",
    )
    # Every suite over the whole grid in one run (one pool of workers, longest first).
    session.run(
        "python",
        "-m",
        "interop",
        "matrix",
        "--suite",
        "all",
        "--output",
        "reports/smoke/report.json",
    )
