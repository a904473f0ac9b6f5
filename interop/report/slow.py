"""A slow side: an adapter much slower a row than its peers on the same rows.

A combination's time divided by the rows it ran is its time a row. For an adapter
as server, each client it met is a yardstick: that client's time against this
server beside its median time against the other servers, in the same suite,
transport and auth mode, on the same rows. The difference a row (start-ups cancel
out: the same client started as often) and the ratio are the server's, as the
median over its clients; a client's are found the same way over the servers it
met. A side is **slow** when it costs at least `EXCESS_MS` a row more than its
peers and `RATIO` times their time: the time is its own, not the machine's (its
peers ran the same rows on the same machine in the same run). Only suites that
declare `timed_rows` (the core suite) are timed, in combinations of at least
`MIN_ROWS` rows: there one client process runs a set and a row is one exchange,
while the step suites start a process per set or per row, whose start-up (Python's
and Node's take 100 ms and more) would pass for a slow side.

The figures go into the timings file (`perRow`, `slowSides`); a slow side is a
warning in the terminal with its likely causes, never a failure (speed is not a
protocol rule, and a timing verdict would be a flaky one).
"""

from __future__ import annotations

import statistics
from typing import Any

from interop.results import Outcome, Status
from interop.suites import DECLARATIONS

EXCESS_MS = 10.0  # on loopback a row is a round trip: well under a millisecond
RATIO = 1.5
MIN_ROWS = 8  # a combination with fewer rows is not timed a row (start-ups dominate)
RAN = (Status.PASSED, Status.FAILED, Status.KNOWN_FAILING, Status.FLAKY)

CAUSES = {
    "http": (
        "Nagle's algorithm: a response (or request) written in two writes, headers then "
        "body, waits on the peer's delayed ACK, about 40 ms a message; write each in one "
        "write or set TCP_NODELAY (docs/CONTRACT.md, Server); a new connection for each "
        "request; a name resolved each time (use 127.0.0.1, not localhost)"
    ),
    "stdio": (
        "output not flushed after each line, or a line read a byte at a time; work done "
        "before each answer that could be done once at start-up"
    ),
}


def _ran(outcomes: list[Outcome]) -> dict[tuple[str, str, str, str, str], tuple[float, int]]:
    """(suite, transport, auth, client, server) -> (seconds, rows run)."""
    found: dict[tuple[str, str, str, str, str], tuple[float, int]] = {}
    for outcome in outcomes:
        declared = DECLARATIONS.get(outcome.suite)
        if declared is None or not declared.timed_rows:
            continue
        ran = sum(1 for r in outcome.rows if r.status in RAN)
        if ran < MIN_ROWS or outcome.seconds <= 0:
            continue  # a few rows, or a process per row: start-ups, not the wire
        c = outcome.combination
        found[(outcome.suite, c.transport, c.auth, c.client, c.server)] = (outcome.seconds, ran)
    return found


def slow_sides(outcomes: list[Outcome]) -> dict[str, list[dict[str, Any]]]:
    """`perRow`: every side's median time a row and what it costs a row beyond its
    peers, per suite and transport; `slowSides`: those past the thresholds, with
    their likely causes."""
    times = _ran(outcomes)
    sides: dict[tuple[str, str, str, str], tuple[list[float], list[float], list[float]]] = {}
    for (suite, transport, auth, client, server), (seconds, rows) in times.items():
        for role, adapter, peer in (("server", server, client), ("client", client, server)):
            others = [  # the same peer, with the other adapters in this role
                t
                for (s, tr, a, cl, sv), (t, _) in times.items()
                if (s, tr, a) == (suite, transport, auth)
                and (cl if role == "server" else sv) == peer
                and (sv if role == "server" else cl) != adapter
            ]
            own, excess, ratios = sides.setdefault((suite, transport, adapter, role), ([], [], []))
            own.append(1000.0 * seconds / rows)
            if others:
                usual = statistics.median(others)
                excess.append(1000.0 * (seconds - usual) / rows)
                ratios.append(seconds / max(usual, 1e-6))
    every: list[dict[str, Any]] = []
    for (suite, transport, adapter, role), (own, excess, ratios) in sorted(sides.items()):
        every.append(
            {
                "suite": suite,
                "transport": transport,
                "adapter": adapter,
                "role": role,
                "msPerRow": round(statistics.median(own), 2),
                "excessMsPerRow": round(statistics.median(excess), 2) if excess else None,
                "ratioToPeers": round(statistics.median(ratios), 2) if ratios else None,
            }
        )
    slow = [
        {**e, "causes": CAUSES.get(e["transport"], "")}
        for e in every
        if (e["excessMsPerRow"] or 0) >= EXCESS_MS and (e["ratioToPeers"] or 0) >= RATIO
    ]
    return {"perRow": every, "slowSides": slow}


def warning_lines(slow: list[dict[str, Any]]) -> list[str]:
    return [
        f"SLOW {e['adapter']} as {e['role']} over {e['transport']} in {e['suite']}: "
        f"{e['excessMsPerRow']:.1f} ms a row more than its peers on the same rows "
        f"({e['ratioToPeers']:.1f}x their time); likely: {e['causes']}"
        for e in slow
    ]
