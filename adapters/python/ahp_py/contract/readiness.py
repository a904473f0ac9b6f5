"""The readiness file, written atomically once the server listens."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..sdk import codec

_TEMPORARY = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def _temporary(directory: Path) -> tuple[int, str]:
    """``tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)``: a new
    file only this process can read and write, under a name nobody else chose
    (``tempfile`` would add ``shutil``, ``random`` and the compression modules to
    every process start)."""
    for _ in range(10000):  # os.TMP_MAX, as tempfile tries
        name = os.path.abspath(os.path.join(directory, f".tmp-{os.urandom(6).hex()}.json"))
        try:
            return os.open(name, _TEMPORARY, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError("No usable temporary file name found")


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write a temporary file in the same directory, then rename it into place."""
    target = Path(path)
    fd, tmp = _temporary(target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(codec.dump_bytes(value) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_readiness(
    path: str, endpoint: str | None, control_endpoint: str, upload_endpoint: str | None = None
) -> None:
    """``{"endpoint", "controlEndpoint", "uploadEndpoint"?, "pid"}``; ``endpoint``
    is None over stdio, ``uploadEndpoint`` only for a server that receives uploads."""
    value: dict[str, Any] = {"endpoint": endpoint, "controlEndpoint": control_endpoint}
    if upload_endpoint is not None:
        value["uploadEndpoint"] = upload_endpoint
    value["pid"] = os.getpid()
    write_json_atomic(path, value)
