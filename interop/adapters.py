"""Discovery and validation of adapter manifests (`adapter.json`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file

COMMAND_KEYS = ("client", "server")
OPTIONAL_COMMAND_KEYS = ("build", "test", "lifecycleClient", "lifecycleServer")
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

    def command(self, key: str) -> tuple[str, ...] | None:
        return self.commands.get(key)


def _command(manifest: Path, key: str, value: Any) -> tuple[str, ...]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(part, str) and part for part in value)
    ):
        raise ManifestError(f"{manifest}: field {key!r} must be a non-empty array of strings")
    return tuple(value)


def load_manifest(manifest: Path, name: str | None = None) -> Adapter:
    """Read and validate one `adapter.json`; every problem names the file and field."""
    try:
        data = load_file(manifest)
    except JsonError as exc:
        raise ManifestError(str(exc)) from None
    if not isinstance(data, dict):
        raise ManifestError(f"{manifest}: the manifest must be a JSON object")
    language = data.get("language")
    if not isinstance(language, str) or not language.strip():
        raise ManifestError(f"{manifest}: field 'language' must be a non-empty string")
    commands: dict[str, tuple[str, ...]] = {}
    for key in COMMAND_KEYS:
        if key not in data:
            raise ManifestError(f"{manifest}: missing field {key!r}")
        commands[key] = _command(manifest, key, data[key])
    for key in OPTIONAL_COMMAND_KEYS:
        if key in data:
            commands[key] = _command(manifest, key, data[key])
    extensions = data.get("extensions", {})
    if not isinstance(extensions, dict):
        raise ManifestError(f"{manifest}: field 'extensions' must be an object")
    for key in ("blind", "receiptLog", "serverReuse"):
        if key in extensions and not isinstance(extensions[key], bool):
            raise ManifestError(f"{manifest}: field 'extensions.{key}' must be a boolean")
    profiles = extensions.get("profiles", ["compat"])
    if not isinstance(profiles, list) or not profiles or not all(p in PROFILES for p in profiles):
        raise ManifestError(
            f"{manifest}: field 'extensions.profiles' must be a non-empty array of "
            f"{', '.join(PROFILES)}"
        )
    directory = manifest.parent
    if directory.name == "interop" and name is None:
        directory_name = directory.parent.name
    else:
        directory_name = directory.name
    return Adapter(
        name=name or directory_name,
        directory=directory.resolve(),
        language=language,
        commands=commands,
        blind=bool(extensions.get("blind", False)),
        receipt_log=bool(extensions.get("receiptLog", False)),
        server_reuse=bool(extensions.get("serverReuse", False)),
        profiles=tuple(profiles),
    )


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
