"""The readiness file, written atomically once the server listens."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ..sdk import codec


def write_json_atomic(path: str | Path, value: Any) -> None:
    """Write a temporary file in the same directory, then rename it into place."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=target.parent)
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
