"""A stdio command that carries each line it reads to a listener of the harness.

Some processes under test spawn a command per call, write it one request line
and read one reply line. This script is such a command in front of an HTTP
listener the harness serves:

    python -I line_relay.py CONFIG WORD... NAME

CONFIG (`write_config`: `{"url", "headers", "words", "label", "peer"}`, readable
by its owner only) keeps the listener's secret headers out of the command
line; the WORDs between CONFIG and NAME are the spawner's own and must be
CONFIG's `words`. Each line read is POSTed, unchanged but for its newline, to
`url` + NAME (quoted) with `headers`; a 200 answer's body is printed as one
line, unchanged. EOF on stdin ends it (status 0); a listener that is not
reached or answers anything but 200 ends it with status 1 and the reason on
stderr (`<label>: the harness's <peer>: ...`). It runs as a script in isolated
mode (`-I`) from the spawner's folder, so it imports nothing but the standard
library: a folder of the spawner's must not shadow the harness.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

TIMEOUT = 30.0  # seconds


def write_config(
    path: Path, *, url: str, headers: dict[str, str], words: list[str], label: str, peer: str
) -> None:
    """The relay's CONFIG, created readable and writable by its owner only."""
    config = {"url": url, "headers": headers, "words": words, "label": label, "peer": peer}
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(config, out)


def command(config: Path) -> list[str]:
    """The relay's command, up to the spawner's WORDs and NAME."""
    return [sys.executable, "-I", str(Path(__file__)), str(config)]


def _carry(config: dict[str, Any], path: str, line: bytes) -> bytes | None:
    """One line to the listener: its 200 answer's body, or None (the reason printed)."""
    url = urlsplit(config["url"])
    label, peer = config["label"], config["peer"]
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=TIMEOUT)
    try:
        connection.request("POST", path, body=line.rstrip(b"\n"), headers=config["headers"])
        response = connection.getresponse()
        reply = response.read()
    except (OSError, http.client.HTTPException) as exc:
        print(f"{label}: the harness's {peer}: {exc}", file=sys.stderr)
        return None
    finally:
        connection.close()
    if response.status != 200:
        text = reply.decode("utf-8", "replace")
        print(f"{label}: the {peer} answered {response.status}: {text}", file=sys.stderr)
        return None
    return reply


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: line_relay.py CONFIG WORD... NAME", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as config_file:
        config = json.load(config_file)
    if argv[1:-1] != config["words"]:
        words = " ".join(config["words"])
        print(f"usage: {config['label']}.py CONFIG {words} NAME", file=sys.stderr)
        return 2
    path = urlsplit(config["url"]).path + quote(argv[-1], safe="")
    for line in sys.stdin.buffer:
        reply = _carry(config, path, line)
        if reply is None:
            return 1
        if reply:
            sys.stdout.buffer.write(reply.rstrip(b"\n") + b"\n")
            sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
