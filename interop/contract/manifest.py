"""Discovery and validation of adapter manifests (`adapter.json`)."""

from __future__ import annotations

import dataclasses
import difflib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import JsonError, load_file

COMMAND_KEYS = ("client", "server", "build", "test", "replay", "lifecycleClient", "lifecycleServer")
PROFILES = ("strict", "compat")
ROLES = ("client", "server")


class ManifestError(ValueError):
    """An adapter manifest is missing, malformed or has an invalid field."""


@dataclass(frozen=True)
class Adapter:
    """One implementation: where it lives, its commands and declared extensions."""

    name: str
    directory: Path  # the working directory of its commands: an SDK's root for interop/
    language: str
    commands: dict[str, tuple[str, ...]]
    blind: bool = False
    receipt_log: bool = False
    server_reuse: bool = False
    profiles: tuple[str, ...] = ("compat",)
    weight: float = 1.0
    manifest: Path | None = None
    version: str | None = None  # [ext] shown in reports
    suites: tuple[str, ...] | None = None  # [ext] the suites it implements (None: every suite)
    roles: dict[str, tuple[str, ...]] | None = None  # [ext] per suite ("*": the rest)
    auth: tuple[str, ...] | None = None  # [ext] the HTTP auth modes it supports (None: all)

    def command(self, key: str) -> tuple[str, ...] | None:
        return self.commands.get(key)

    def has_role(self, suite: str, role: str) -> bool:
        """Whether it plays `role` (client, server) in `suite` (extensions.roles)."""
        if self.roles is None:
            return True
        return role in self.roles.get(suite, self.roles.get("*", ROLES))

    def lacks(self, suite: str, role: str, transport: str, auth: str) -> str | None:
        """Why it cannot be `role` of a `suite` combination over `transport`/`auth`, by
        its manifest's own declarations (extensions.suites, roles, auth); None if it can."""
        if self.suites is not None and suite not in self.suites:
            return (
                f"{self.name} does not implement the {suite} suite (its manifest's "
                f"extensions.suites: {', '.join(self.suites)})"
            )
        if not self.has_role(suite, role):
            assert self.roles is not None
            declared = "; ".join(f"{k}: {', '.join(v)}" for k, v in self.roles.items())
            return (
                f"{self.name} has no {role} for the {suite} suite (its manifest's "
                f"extensions.roles: {declared})"
            )
        if transport == "http" and self.auth is not None and auth not in self.auth:
            return (
                f"{self.name} does not support the {auth} auth mode (its manifest's "
                f"extensions.auth: {', '.join(self.auth)})"
            )
        return None


def load_manifest(manifest: Path, name: str | None = None) -> Adapter:
    """Read and validate one `adapter.json` against `schemas/contract/adapter.schema.json`.

    Every problem names the file, the field and the rule. A manifest in an `interop/`
    folder belongs to an SDK checkout: its commands run from the SDK's root, as the
    upstream contract v1 runs them ("commands execute in SDK cwd"); any other
    manifest's commands run from its own folder. The name defaults to the
    manifest's `language`.
    """
    try:
        data = load_file(manifest)
    except JsonError as exc:
        raise ManifestError(str(exc)) from None
    unknown = _unknown_keys(data)
    if unknown is not None:
        raise ManifestError(f"{manifest}: {unknown} (schemas/contract/adapter.schema.json)")
    problem = contract_problem("adapter.schema.json", data)
    if problem is not None:
        raise ManifestError(f"{manifest}: {problem} (schemas/contract/adapter.schema.json)")
    if name is not None and NAME.fullmatch(name) is None:
        raise ManifestError(f"{manifest}: adapter name {name!r} {NAME_RULE}")
    commands = {key: tuple(data[key]) for key in COMMAND_KEYS if key in data}
    extensions = data.get("extensions", {})
    roles = {k: tuple(v) for k, v in extensions["roles"].items()} if "roles" in extensions else None
    for role in ROLES:  # the core commands: required for a role the core suite has
        plays = roles is None or role in roles.get("core", roles.get("*", ROLES))
        if plays and role not in commands:
            raise ManifestError(
                f"{manifest}: $.{role} is required: the adapter plays the {role} in the core "
                f"suite; for an adapter without one, declare the roles it has, e.g. "
                f'"extensions": {{"roles": {{"*": ["{_other(role)}"]}}}} (docs/CONTRACT.md, '
                "Partial adapters)"
            )
    directory = manifest.parent
    if directory.name == "interop":
        directory = directory.parent
    return Adapter(
        name=name or data["language"],
        directory=directory.resolve(),
        language=data["language"],
        commands=commands,
        blind=bool(extensions.get("blind", False)),
        receipt_log=bool(extensions.get("receiptLog", False)),
        server_reuse=bool(extensions.get("serverReuse", False)),
        profiles=tuple(extensions.get("profiles", ["compat"])),
        weight=float(extensions.get("weight", 1.0)),
        manifest=manifest.resolve(),
        version=data.get("version"),
        suites=tuple(extensions["suites"]) if "suites" in extensions else None,
        roles=roles,
        auth=tuple(extensions["auth"]) if "auth" in extensions else None,
    )


def _other(role: str) -> str:
    return "server" if role == "client" else "client"


# An adapter's name is part of every combination's key, report path and log folder.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9][A-Za-z0-9._-]*)?")
NAME_RULE = (
    "must be letters, digits, '.', '_' or '-', starting with a letter or digit "
    "(a revision's adapter adds '@' and its revision)"
)


TOP_KEYS = ("language", "version", *COMMAND_KEYS, "extensions")
EXTENSION_KEYS = (
    "blind", "receiptLog", "serverReuse", "profiles", "weight", "suites", "roles", "auth",
)  # fmt: skip


def _unknown_keys(data: Any) -> str | None:
    """The first misspelt or unknown key, with the closest known one, else None."""
    if not isinstance(data, dict):
        return None
    places: list[tuple[str, Any, tuple[str, ...]]] = [("$", data, TOP_KEYS)]
    if isinstance(data.get("extensions"), dict):
        places.append(("$.extensions", data["extensions"], EXTENSION_KEYS))
    for where, block, known in places:
        for key in block:
            if key in known or (where == "$" and key.startswith("x-")):
                continue
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(known)}"
            return f"{where}: unknown key {key!r}{hint}"
    return None


def manifest_in(directory: Path) -> Path:
    """The `adapter.json` of an adapter folder or an SDK checkout (`interop/adapter.json`)."""
    for candidate in (directory / "adapter.json", directory / "interop" / "adapter.json"):
        if candidate.is_file():
            return candidate
    raise ManifestError(f"{directory}: no adapter.json (looked in . and interop/)")


@dataclass(frozen=True)
class AdapterDir:
    """One `--adapter-dir [NAME=]PATH`: an extra adapter, named or not."""

    path: Path
    name: str | None = None
    rev: str | None = None  # `PATH@REV`: a git revision of it (interop/revisions.py)

    @classmethod
    def parse(cls, text: str) -> AdapterDir:
        """`PATH`, `NAME=PATH`, either with `@REV` (a path holding `=` before any `/`
        needs `./` in front; one that exists as given is never split at `@`)."""
        name, equals, rest = text.partition("=")
        if equals and name and "/" not in name:
            if NAME.fullmatch(name) is None:
                raise ValueError(f"--adapter-dir {text}: the name {name!r} {NAME_RULE}")
        else:
            name, rest = "", text
        where, at, rev = rest.rpartition("@")
        if not at or not where or not rev or Path(rest).exists():
            return cls(Path(rest), name or None)
        return cls(Path(where), name or None, rev)

    def argument(self) -> str:
        """The option that names the same adapter again (for a child command line)."""
        where = str(self.path.resolve()) + (f"@{self.rev}" if self.rev else "")
        return f"--adapter-dir={self.name}={where}" if self.name else f"--adapter-dir={where}"


def discover(adapters_root: Path, extra_dirs: list[AdapterDir] | None = None) -> dict[str, Adapter]:
    """Every `adapters/*/adapter.json` plus each `--adapter-dir`, keyed by adapter name.

    Our adapters are named after their folders. An extra adapter takes the name it
    is given, else its manifest's `language`, with `-2`, `-3`, ... when that is
    taken (a note on stderr says so, and how to name it)."""
    found: dict[str, Adapter] = {}
    manifests = sorted(adapters_root.glob("*/adapter.json")) if adapters_root.is_dir() else []
    for manifest in manifests:
        adapter = load_manifest(manifest, manifest.parent.name)
        found[adapter.name] = adapter
    for extra in extra_dirs or []:
        directory = extra.path.resolve()
        if not directory.is_dir():
            raise ManifestError(f"{extra.path}: --adapter-dir is not a directory")
        adapter = load_manifest(manifest_in(directory), extra.name)
        if adapter.name in found:
            if extra.name is not None:
                raise ManifestError(
                    f"{directory}: adapter name {adapter.name!r} is already taken by "
                    f"{found[adapter.name].directory}; give another with --adapter-dir NAME=PATH"
                )
            number = 2
            while f"{adapter.language}-{number}" in found:
                number += 1
            taken = found[adapter.name].directory
            adapter = dataclasses.replace(adapter, name=f"{adapter.language}-{number}")
            print(
                f"note: {directory} is named {adapter.name!r} ({adapter.language!r} is "
                f"{taken}); name it with --adapter-dir NAME={directory}",
                file=sys.stderr,
            )
        found[adapter.name] = adapter
    return found
