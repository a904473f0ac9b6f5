"""Discovery and validation of adapter manifests (`adapter.json`)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.contract.check import contract_problem
from interop.jsonvalue import JsonError, load_file

COMMAND_KEYS = ("client", "server", "build", "test", "replay", "lifecycleClient", "lifecycleServer")
PROFILES = ("strict", "compat")


class ManifestError(ValueError):
    """An adapter manifest is missing, malformed or has an invalid field."""


@dataclass(frozen=True)
class Adapter:
    """One implementation: where it lives, its commands and declared extensions."""

    name: str
    directory: Path
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

    def command(self, key: str) -> tuple[str, ...] | None:
        return self.commands.get(key)


def load_manifest(manifest: Path, name: str | None = None) -> Adapter:
    """Read and validate one `adapter.json` against `schemas/contract/adapter.schema.json`.

    Every problem names the file, the field and the rule.
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
    commands = {key: tuple(data[key]) for key in COMMAND_KEYS if key in data}
    extensions = data.get("extensions", {})
    directory = manifest.parent
    if directory.name == "interop" and name is None:
        directory_name = directory.parent.name
    else:
        directory_name = directory.name
    return Adapter(
        name=name or directory_name,
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
    )


TOP_KEYS = ("language", "version", *COMMAND_KEYS, "extensions")
EXTENSION_KEYS = ("blind", "receiptLog", "serverReuse", "profiles", "weight", "suites")


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


def _manifest_in(directory: Path) -> Path:
    for candidate in (directory / "adapter.json", directory / "interop" / "adapter.json"):
        if candidate.is_file():
            return candidate
    raise ManifestError(f"{directory}: no adapter.json (looked in . and interop/)")


def discover(adapters_root: Path, extra_dirs: list[Path] | None = None) -> dict[str, Adapter]:
    """Every `adapters/*/adapter.json` plus each `--adapter-dir`, keyed by adapter name."""
    found: dict[str, Adapter] = {}
    manifests = sorted(adapters_root.glob("*/adapter.json")) if adapters_root.is_dir() else []
    for manifest in manifests:
        adapter = load_manifest(manifest)
        found[adapter.name] = adapter
    for directory in extra_dirs or []:
        if not directory.is_dir():
            raise ManifestError(f"{directory}: --adapter-dir is not a directory")
        adapter = load_manifest(_manifest_in(directory))
        if adapter.name in found:
            raise ManifestError(
                f"{directory}: adapter name {adapter.name!r} is already taken by "
                f"{found[adapter.name].directory}"
            )
        found[adapter.name] = adapter
    return found
