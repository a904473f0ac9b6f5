"""`sdks prepare`: the pinned upstream SDKs, checked out and built for a run.

    ahp-interop sdks prepare --pins sdk-revisions.json --into DIR [--only NAME ...]

`sdk-revisions.json` pins each SDK: its repository (`owner/name` on GitHub, or a
URL or local path), the 40-hex revision, the folder of its `adapter.json`
(`interop`, as upstream's layout has it) and the build its README gives. For each,
this clones the repository into `DIR/NAME` (once; a later run reuses it), checks
the revision out (detached), checks HEAD is the pin, and runs the build there, its
output in `DIR/NAME.build.log`.

It writes `DIR/status.json` (per SDK: `checked-out`, `built`, `build-failed` or
`clone-failed`, the revision, the log) and `DIR/adapter-args`, one
`--adapter-dir=NAME=PATH` per line for every SDK with a checkout, and `--spec=DIR/spec`
when the pins name the spec (`$.spec`: its schemas go to the SDKs, as upstream's
drivers hand them `schema/draft`), **a failed build included**: its adapter then
fails the combinations it is in, naming its command, so a pin that does not build
is reported in the record, never dropped. An SDK whose clone failed has no folder
to run; it is in `status.json` and on stderr, and the exit status is 1 whenever any
pin did not build.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from interop.jsonvalue import JsonError, load_file
from interop.revisions import RevisionError, git, run_logged

HEX = re.compile(r"[0-9a-f]{40}")
GITHUB = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
BUILD_TIMEOUT = 1800


class PinsError(ValueError):
    """sdk-revisions.json is not usable: named by file and field."""


def load_pins(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The SDK pins (`$.sdks`) and the spec's pin (`$.spec`, or None), checked."""
    try:
        data = load_file(path)
    except (OSError, JsonError) as exc:
        raise PinsError(f"{path}: {exc}") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise PinsError(f'{path}: expected {{"version": 1, "sdks": {{...}}}}')
    sdks = data.get("sdks")
    if not isinstance(sdks, dict) or not sdks:
        raise PinsError(f"{path}: $.sdks must name at least one SDK")
    for name, pin in sdks.items():
        where = f"{path}: $.sdks.{name}"
        if not isinstance(pin, dict):
            raise PinsError(f"{where}: an object")
        for key in ("repository", "revision", "interop"):
            if not isinstance(pin.get(key), str) or not pin[key]:
                raise PinsError(f"{where}.{key}: a non-empty string is required")
        if HEX.fullmatch(pin["revision"]) is None:
            raise PinsError(f"{where}.revision: 40 lowercase hex digits (a commit, not a tag)")
        build = pin.get("build", [])
        if not isinstance(build, list) or not all(
            isinstance(step, list) and step and all(isinstance(a, str) for a in step)
            for step in build
        ):
            raise PinsError(f"{where}.build: a list of commands, each a list of strings")
    spec = data.get("spec")
    if spec is not None and (
        not isinstance(spec, dict) or HEX.fullmatch(str(spec.get("revision", ""))) is None
    ):
        raise PinsError(f"{path}: $.spec.revision: 40 lowercase hex digits")
    return sdks, spec


def source(repository: str) -> str:
    """What `git clone` takes: `owner/name` is GitHub; a URL or a path is itself."""
    if "://" in repository or repository.startswith(("/", ".", "~")):
        return repository
    if GITHUB.fullmatch(repository):
        return f"https://github.com/{repository}.git"
    raise PinsError(f"repository {repository!r}: owner/name, a URL or a path")


def prepare(pins_file: Path, into: Path, only: list[str] | None = None) -> int:
    pins, spec_pin = load_pins(pins_file)
    unknown = sorted(set(only or []) - set(pins))
    if unknown:
        raise PinsError(f"--only {', '.join(unknown)}: not in {pins_file} ({', '.join(pins)})")
    into.mkdir(parents=True, exist_ok=True)
    status: dict[str, dict[str, Any]] = {}
    arguments: list[str] = []
    for name, pin in pins.items():
        if only and name not in only:
            continue
        checkout, log = into / name, into / f"{name}.build.log"
        log.write_bytes(b"")
        entry: dict[str, Any] = {"repository": pin["repository"], "revision": pin["revision"]}
        entry["log"] = str(log)
        status[name] = entry
        print(f"sdks: {name} at {pin['revision'][:12]} from {pin['repository']}", file=sys.stderr)
        why = _checkout(pin["repository"], pin["revision"], checkout, log)
        if why is not None:
            entry["status"] = "clone-failed"
            print(f"sdks: {name}: {why}; log: {log}", file=sys.stderr)
            continue
        entry["status"] = "checked-out"
        for step in pin.get("build", []):
            code = run_logged(step, checkout, log, BUILD_TIMEOUT)
            if code != 0:
                entry["status"] = "build-failed"
                print(f"sdks: {name}: `{' '.join(step)}` failed ({code}); log: {log}",
                      file=sys.stderr)  # fmt: skip
                break
        else:
            entry["status"] = "built"
        # an SDK root holding interop/adapter.json is itself the folder (commands run there)
        folder = checkout if pin["interop"] == "interop" else checkout / pin["interop"]
        arguments.append(f"--adapter-dir={name}={folder}")
        entry["adapterDir"] = str(folder)
    spec = _spec(spec_pin, into) if spec_pin is not None else None
    if spec is not None:  # the SDKs get the spec's own schemas (--spec), as upstream's drivers
        arguments.append(f"--spec={spec}")
    (into / "status.json").write_text(json.dumps(status, indent=2) + "\n")
    (into / "adapter-args").write_text("".join(a + "\n" for a in arguments))
    bad = [n for n, e in status.items() if e["status"] != "built"]
    if bad:
        print(f"sdks: not built: {', '.join(bad)} (see {into / 'status.json'})", file=sys.stderr)
    return 1 if bad else 0


def _checkout(repository: str, revision: str, checkout: Path, log: Path) -> str | None:
    """Clone `repository` into `checkout` (once) and check `revision` out, detached;
    None when HEAD is that revision, else why not."""
    if not (checkout / ".git").exists():
        clone = ["git", "clone", "--quiet", source(repository), str(checkout)]
        code = run_logged(clone, checkout.parent, log, BUILD_TIMEOUT)
        if code != 0:
            return f"the clone failed ({code})"
    detach = ["git", "checkout", "--quiet", "--detach", revision]
    if run_logged(detach, checkout, log, 300) != 0:
        return f"revision {revision} not checked out"
    try:
        head = git(checkout, "rev-parse", "HEAD")
    except RevisionError as exc:
        return str(exc)
    return None if head == revision else f"HEAD is {head}, not the pin {revision}"


def _spec(pin: dict[str, Any], into: Path) -> Path | None:
    """The pinned spec checkout (`$.spec`: repository and revision), or None."""
    checkout, log = into / "spec", into / "spec.log"
    log.write_bytes(b"")
    why = _checkout(str(pin.get("repository", "")), str(pin["revision"]), checkout, log)
    if why is not None:
        print(f"sdks: the spec: {why}; log: {log}", file=sys.stderr)
        return None
    return checkout
