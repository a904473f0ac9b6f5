"""Watch one command's process tree while it runs: memory, processes, adapter time.

A thread samples the tree every `interval` seconds with psutil. From the samples:
the peak of the tree's summed resident memory (the harness and every adapter
alive at that instant), the distinct processes seen (a lower bound on the starts:
one that lives less than an interval can be missed; the matrix's own count of
starts is exact), and the time during which at least one adapter process was
alive. The harness's overhead is the wall time outside that: the time no adapter
was working, with the harness planning, writing configs, reading receipts and
judging. Sampling costs a few percent of one core at the default interval.
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psutil


@dataclass
class Watched:
    returncode: int
    wall: float
    peak_rss: int = 0
    processes_seen: int = 0
    adapter_seconds: float = 0.0
    samples: int = 0
    pids: set[int] = field(default_factory=set, repr=False)

    @property
    def harness_overhead(self) -> float:
        return max(0.0, self.wall - self.adapter_seconds)


def _tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def watch(command: Sequence[str], *, cwd: Path, log: Path, interval: float = 0.05) -> Watched:
    """Run `command` (output to `log`) and sample its tree until it exits."""
    started = time.monotonic()
    with log.open("wb") as out:
        popen = subprocess.Popen(list(command), cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    root = psutil.Process(popen.pid)
    result = Watched(returncode=0, wall=0.0)
    stop = threading.Event()

    def sample() -> None:
        last = time.monotonic()
        while not stop.is_set():
            now = time.monotonic()
            elapsed, last = now - last, now
            members = _tree(root)
            rss = 0
            adapters = 0
            for member in members:
                try:
                    rss += member.memory_info().rss
                except psutil.Error:
                    continue
                result.pids.add(member.pid)
                if member.pid != root.pid:
                    adapters += 1
            result.peak_rss = max(result.peak_rss, rss)
            if adapters:
                result.adapter_seconds += elapsed
            result.samples += 1
            stop.wait(interval)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        result.returncode = popen.wait()
    finally:
        stop.set()
        thread.join()
    result.wall = time.monotonic() - started
    result.adapter_seconds = min(result.adapter_seconds, result.wall)
    result.processes_seen = len(result.pids - {root.pid})
    return result
