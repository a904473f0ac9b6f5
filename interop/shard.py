"""Sharding a run: `--shard K/N` runs the K-th of N even, deterministic parts of the grid.

Every shard of a run is given the same command line but its `--shard`; each
expands the same grid, asks the same suites, and keeps only its part:

- the jobs (a suite's combinations that run together in one worker) are
  split by cost with `partition`: greedy longest-processing-time, so the
  shards' loads differ by at most the largest job's cost;
- the inapplicable combinations (cost 0, nothing runs) are split apart, by
  count, so each is listed by exactly one shard's report.

A sharded report carries `shard` (`shard_meta`): its index, the count, and
the grid of the unsharded run, so `interop.report.combine.combine` can check
that the shards fit together and rebuild the report the unsharded run would
have written, byte for byte.

A combination's key is `suite/client->server/transport/auth` (`grid_key`),
the JUnit name of its test suite.

Wiring (not done here). `interop/runner.py`: `MatrixOptions` gets
`shard: tuple[int, int] | None = None`; in `run_matrix`, after
`planned.sort(...)` and before `progress = Progress(...)` (at that point
`outcomes` holds only the inapplicable outcomes)::

    shard_record: dict[str, Any] | None = None
    if options.shard is not None:
        index, count = options.shard
        jobs = [
            ([shard.grid_key(p.run.name, c) for c in p.job.combinations], p.job.cost)
            for p in planned
        ]
        inapplicable = [shard.grid_key(o.suite, o.combination) for o in outcomes]
        mine = shard.shard_plan(jobs, inapplicable, index, count)
        grid = [key for keys, _ in jobs for key in keys] + inapplicable
        shard_record = shard.shard_meta(index, count, grid)
        planned = [p for p in planned if shard.grid_key(p.run.name, p.job.combinations[0]) in mine]
        outcomes = [o for o in outcomes if shard.grid_key(o.suite, o.combination) in mine]

and after `document = build_document(...)`::

    if shard_record is not None:
        document["shard"] = shard_record

`interop/cli.py`: `matrix.add_argument("--shard", metavar="K/N", help=...)`
and, where `MatrixOptions` is built, `shard=shard.parse(args.shard) if
args.shard else None`, a ValueError becoming `UsageError(str(exc))` (parse
in `_main`, not as argparse's `type=`, which would hide the message).
"""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from interop.grid import Combination

_SHARD = re.compile(r"([0-9]+)/([0-9]+)")


def parse(text: str) -> tuple[int, int]:
    """`K/N` as (K, N), 1 <= K <= N; a ValueError naming `--shard` otherwise."""
    match = _SHARD.fullmatch(text)
    if match is None:
        raise ValueError(f"--shard {text!r}: expected K/N, e.g. 1/4 (the first of four shards)")
    index, count = int(match[1]), int(match[2])
    if count < 1:
        raise ValueError(f"--shard {text!r}: the number of shards N must be at least 1")
    if not 1 <= index <= count:
        raise ValueError(f"--shard {text!r}: the shard K must be between 1 and N ({count})")
    return index, count


def _check(index: int, count: int) -> None:
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"--shard {index}/{count}: K must be between 1 and N, N at least 1")


def grid_key(suite: str, combination: Combination) -> str:
    """A combination of one suite as `suite/client->server/transport/auth`."""
    c = combination
    return f"{suite}/{c.client}->{c.server}/{c.transport}/{c.auth}"


def partition(items: Sequence[tuple[str, float]], count: int) -> list[list[str]]:
    """Keyed items split into `count` shards, evenly by cost, deterministically.

    Greedy longest-processing-time: items by cost descending, then key; each
    goes to the lightest shard so far: the least cost, then (so that items of
    cost 0 spread too) the fewest items, then the lowest index. The loads
    then differ by at most the largest item's cost. Each shard lists its keys
    in the order they were given to it (costliest first). Keys must be unique
    and costs finite and not negative.
    """
    if count < 1:
        raise ValueError(f"cannot split into {count} shards: the count must be at least 1")
    seen: set[str] = set()
    for key, cost in items:
        if key in seen:
            raise ValueError(f"the key {key!r} is given twice")
        seen.add(key)
        if not math.isfinite(cost) or cost < 0:
            raise ValueError(f"the key {key!r} has cost {cost!r}: costs are finite, not negative")
    shards: list[list[str]] = [[] for _ in range(count)]
    lightest: list[tuple[float, int, int]] = [(0.0, 0, index) for index in range(count)]
    for key, cost in sorted(items, key=lambda item: (-item[1], item[0])):
        load, size, index = heapq.heappop(lightest)
        shards[index].append(key)
        heapq.heappush(lightest, (load + cost, size + 1, index))
    return shards


def loads(items: Sequence[tuple[str, float]], shards: Sequence[Sequence[str]]) -> list[float]:
    """Each shard's total cost (for checks and messages)."""
    cost = dict(items)
    return [sum(cost[key] for key in shard) for shard in shards]


def shard_plan(
    jobs: Sequence[tuple[Sequence[str], float]],
    inapplicable: Iterable[str],
    index: int,
    count: int,
) -> set[str]:
    """The grid keys shard `index` of `count` runs (or lists as inapplicable).

    `jobs` holds each job's combination keys (`grid_key`) with its cost, in
    any order; `inapplicable` the keys of the combinations no suite runs. A
    job stays whole in one shard (its combinations share a server); jobs
    split by cost, the inapplicable combinations apart by count. Every key is
    in exactly one shard's plan.
    """
    _check(index, count)
    keyed: list[tuple[str, float]] = []
    members: dict[str, Sequence[str]] = {}
    every: set[str] = set()
    for keys, cost in jobs:
        if not keys:
            raise ValueError("a job without combinations cannot be sharded")
        job = ",".join(keys)
        for key in keys:
            if key in every:
                raise ValueError(f"the combination {key} is planned twice")
            every.add(key)
        keyed.append((job, cost))
        members[job] = keys
    rest = list(inapplicable)
    for key in rest:
        if key in every:
            raise ValueError(f"the combination {key} is planned twice")
        every.add(key)
    mine = {key for job in partition(keyed, count)[index - 1] for key in members[job]}
    mine.update(partition([(key, 0.0) for key in rest], count)[index - 1])
    return mine


def shard_meta(index: int, count: int, grid_keys: Iterable[str]) -> dict[str, Any]:
    """The `shard` object of a sharded report: which shard, of how many, of what grid."""
    _check(index, count)
    keys = list(grid_keys)
    grid = sorted(set(keys))
    if len(grid) != len(keys):
        raise ValueError("the grid names a combination twice")
    return {"index": index, "count": count, "grid": grid}
