"""One stdio call of a contract v1 compaction-wire host, carried to our server.

Upstream's host (`<cmd> host`, interop/compaction_wire_matrix.py@8f91ac41)
makes each stdio call by spawning `receiverCommand + ["stdio", <scope>]`,
writing one request line and reading one reply line. When the host runs
against one of our servers (docs/COMPACTION.md, "A contract v1 host"), its
`receiverCommand` is this script:

    python -I host_relay.py GATE_FILE stdio SCOPE

It posts each line it reads, unchanged, to the harness's gate
(`POST <gate>/relay/<scope>` with the run's relay secret), which writes it to
our server's stdin and answers the server's one reply line, unchanged; the
script prints that line. GATE_FILE (`{"gate": URL, "secret": ...}`, readable
by its owner only) keeps the secret out of the command line. It runs as a
script in isolated mode (`-I`) from the SDK's root, so it imports nothing but
the standard library: an SDK's own `interop/` folder must not shadow the
harness. EOF on stdin ends it (status 0); a gate that refuses a line ends it
with status 1 and the reason on stderr.
"""

from __future__ import annotations

import http.client
import json
import sys
from urllib.parse import quote, urlsplit

TIMEOUT = 30.0  # seconds: upstream's host gives a stdio call 20


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] != "stdio":
        print("usage: host_relay.py GATE_FILE stdio SCOPE", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as config_file:
        config = json.load(config_file)
    gate = urlsplit(config["gate"])
    path = "/relay/" + quote(argv[2], safe="")
    headers = {"AHP-Relay-Secret": config["secret"], "Content-Type": "application/json"}
    for line in sys.stdin.buffer:
        connection = http.client.HTTPConnection(gate.hostname, gate.port, timeout=TIMEOUT)
        try:
            connection.request("POST", path, body=line.rstrip(b"\n"), headers=headers)
            response = connection.getresponse()
            reply = response.read()
        except (OSError, http.client.HTTPException) as exc:
            print(f"host_relay: the harness's gate: {exc}", file=sys.stderr)
            return 1
        finally:
            connection.close()
        if response.status != 200:
            text = reply.decode("utf-8", "replace")
            print(f"host_relay: the gate answered {response.status}: {text}", file=sys.stderr)
            return 1
        if reply:
            sys.stdout.buffer.write(reply.rstrip(b"\n") + b"\n")
            sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
