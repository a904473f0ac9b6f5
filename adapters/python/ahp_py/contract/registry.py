"""The suites of an adapter and the one way a command reaches one
(docs/CONTRACT.md, "One command pair for every suite past core").

A suite is one module under ``suites/`` declaring its ``SUITE``: its name and,
for each command it serves, the function that runs it on the config's path
and returns the exit code. ``COMMANDS`` says which suite a command runs: the
core commands (``client``, ``server``, ``replay``) the core suite, the
lifecycle commands the one the config's ``suite`` names. ``run`` routes every
command the same way; it knows no suite but by that name, and gets the suite
from ``find`` (the ``suites`` package's table, which imports only the module
asked for). A suite the adapter lacks, or one that does not serve the
command, is never silently passed: its client reports every row
``unsupported`` naming it, its server exits 2 naming the ``suite`` field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..sdk.record import record
from .config import load_fields, not_implemented, suite_of

CORE = "core"
CLIENT, SERVER, REPLAY = "client", "server", "replay"
LIFECYCLE_CLIENT, LIFECYCLE_SERVER = "lifecycle-client", "lifecycle-server"
# command -> the suite it runs (None: the one the config's ``suite`` names)
COMMANDS: dict[str, str | None] = {
    CLIENT: CORE,
    SERVER: CORE,
    REPLAY: CORE,
    LIFECYCLE_CLIENT: None,
    LIFECYCLE_SERVER: None,
}

Command = Callable[[str], int]  # the config's path -> the exit code


@record
class Suite:
    """One suite: its name (the config's ``suite``) and its commands (keys of
    ``COMMANDS``), each taking the config's path and returning the exit code."""

    name: str
    commands: Mapping[str, Command]


Finder = Callable[[str], Suite | None]  # a suite's name -> the suite (None: not implemented)


def run(command: str, config_path: str, find: Finder) -> int:
    """Run ``command`` on the config at ``config_path`` through the suite it names.
    A config that cannot say its suite raises ``ConfigError``."""
    name = COMMANDS[command]
    config = None
    if name is None:
        config = load_fields(config_path)
        name = suite_of(config)
    suite = find(name)
    handler = None if suite is None else suite.commands.get(command)
    if handler is not None:
        return handler(config_path)
    if command == LIFECYCLE_CLIENT:
        from .config import load_suite_client
        from .steps import report_unimplemented

        return report_unimplemented(load_suite_client(config_path, None))
    if command == LIFECYCLE_SERVER and config is not None:
        raise not_implemented(config, name)
    raise LookupError(f"no suite serves {command!r} (suite {name!r})")
