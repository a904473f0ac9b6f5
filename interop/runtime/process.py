"""Processes: spawn in an own session, wait for readiness or exit, kill whole trees.

The harness makes itself a child subreaper (Linux), so every descendant of an
adapter, even a grandchild that changed its process group and lost its parent,
stays in the harness's process tree. Each spawned process carries a marker in
its environment (`AHP_INTEROP_OWNER`); teardown kills every descendant that
carries the owner's marker, so parallel combinations never touch each other.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil

OWNER_VARIABLE = "AHP_INTEROP_OWNER"
_TICKS = os.sysconf("SC_CLK_TCK")  # the harness runs on Linux (/proc, PR_SET_CHILD_SUBREAPER)
_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux only); returns whether it worked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


class WatchdogExpired(TimeoutError):
    """A bounded wait ran out."""


@dataclass
class Spawned:
    """A process started by the harness, with its log file and owner marker."""

    popen: subprocess.Popen[bytes]
    owner: str
    label: str
    _pidfd: int | None = field(default=None, repr=False)
    # told the process's CPU seconds once, when it has exited and is not yet reaped
    on_cpu: Callable[[float], None] | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def pidfd(self) -> int | None:
        if self._pidfd is None and hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                self._pidfd = os.pidfd_open(self.popen.pid)
        return self._pidfd

    def close(self) -> None:
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


def spawn(
    command: Sequence[str],
    *,
    cwd: Path,
    owner: str,
    label: str,
    log_path: Path | None = None,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    stdout: int | IO[bytes] | None = None,
    env: dict[str, str] | None = None,
) -> Spawned:
    """Start `command` in its own session with the owner marker in its environment.

    stdout and stderr go to `log_path` unless `stdout` is given.
    """
    environment = dict(os.environ if env is None else env)
    environment[OWNER_VARIABLE] = owner
    log = open(log_path, "ab") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        popen = subprocess.Popen(
            list(command),
            cwd=cwd,
            stdin=stdin,
            stdout=stdout if stdout is not None else log,
            stderr=log,
            env=environment,
            start_new_session=True,
        )
    finally:
        if log_path is not None and not isinstance(log, int):
            log.close()
    return Spawned(popen=popen, owner=owner, label=label)


def cpu_seconds(pid: int) -> float | None:
    """User and system CPU of `pid` and of the children it waited for (`/proc/PID/stat`;
    an exited process keeps its entry until it is reaped). None when unreadable."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            data = stat.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()  # from field 3 (state) on
    try:
        return sum(int(v) for v in fields[11:15]) / _TICKS  # utime stime cutime cstime
    except (ValueError, IndexError):
        return None


def describe_exit(returncode: int | None) -> str:
    """`exited with status 3`, `was killed by signal 9 (SIGKILL)`, or `is still running`."""
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown signal"
        return f"was killed by signal {-returncode} ({name})"
    return f"exited with status {returncode}"


def wait_exit(process: Spawned, timeout: float) -> int:
    """Wait for exit, event-driven through a pidfd where the kernel has one."""
    fd = process.pidfd()
    if fd is not None:
        ready, _, _ = select.select([fd], [], [], max(timeout, 0.0))
        if not ready:
            raise WatchdogExpired(f"{process.label} still running after {timeout:.0f}s")
        if process.on_cpu is not None and process.popen.returncode is None:
            seconds = cpu_seconds(process.pid)  # exited, not reaped: its entry is whole
            if seconds is not None:
                process.on_cpu(seconds)
            process.on_cpu = None
        return process.popen.wait()
    try:
        return process.popen.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        raise WatchdogExpired(f"{process.label} still running after {timeout:.0f}s") from None


class _Inotify:
    """Minimal inotify for one directory (Linux); None-safe fallback elsewhere."""

    IN_CLOSE_WRITE = 0x00000008
    IN_MOVED_TO = 0x00000080
    IN_CREATE = 0x00000100
    IN_NONBLOCK = 0o4000
    IN_CLOEXEC = 0o2000000

    def __init__(self, directory: Path) -> None:
        self.fd = -1
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = libc.inotify_init1(self.IN_NONBLOCK | self.IN_CLOEXEC)
            if fd < 0:
                return
            mask = self.IN_CLOSE_WRITE | self.IN_MOVED_TO | self.IN_CREATE
            if libc.inotify_add_watch(fd, os.fsencode(directory), mask) < 0:
                os.close(fd)
                return
            self.fd = fd
        except (OSError, AttributeError):
            self.fd = -1

    def drain(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self.fd, 65536):
                pass

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def wait_for_file(path: Path, timeout: float, watched: Spawned | None = None) -> None:
    """Block until `path` exists, the watched process exits, or the watchdog expires.

    Waits on inotify and the process's pidfd (events, not a polling loop); on
    systems without them it falls back to short sleeps.
    """
    deadline = time.monotonic() + timeout
    notify = _Inotify(path.parent)
    try:
        while True:
            if path.exists():
                return
            if watched is not None and watched.popen.poll() is not None:
                raise ProcessLookupError(
                    f"{watched.label} exited with status {watched.popen.returncode} before ready"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WatchdogExpired(f"{path.name} did not appear within {timeout:.0f}s")
            fds = [notify.fd] if notify.fd >= 0 else []
            pidfd = watched.pidfd() if watched is not None else None
            if pidfd is not None:
                fds.append(pidfd)
            if notify.fd >= 0:
                select.select(fds, [], [], remaining)
                notify.drain()
            else:
                time.sleep(min(0.01, remaining))
    finally:
        notify.close()


def _owner_of(process: psutil.Process) -> str | None:
    try:
        return process.environ().get(OWNER_VARIABLE)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
        return None


def _descendant_pids(root: int) -> list[int] | None:
    """The pids below `root`, from each thread's `/proc/<pid>/task/<tid>/children`
    (Linux): a read per thread of the tree, not one per process of the machine as
    psutil's parent map. None where the kernel has no such file."""
    found: list[int] = []
    pending = [root]
    while pending:
        pid = pending.pop()
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone meanwhile
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/children", "rb") as handle:
                    text = handle.read()
            except FileNotFoundError:
                if pid == root and not os.path.exists(f"/proc/{pid}/task/{thread}"):
                    continue  # the thread ended meanwhile
                if pid == root:
                    return None  # no children files on this kernel
                continue
            except OSError:
                continue
            for child in text.split():
                found.append(int(child))
                pending.append(int(child))
    return found


def owned_processes(owner: str) -> list[psutil.Process]:
    """Every live descendant of the harness that carries `owner`'s marker."""
    pids = _descendant_pids(os.getpid())
    if pids is None:
        try:
            descendants = psutil.Process().children(recursive=True)
        except psutil.NoSuchProcess:
            return []
        return [p for p in descendants if _owner_of(p) == owner]
    marker = f"{OWNER_VARIABLE}={owner}".encode()
    owned = []
    for pid in pids:
        try:  # the raw environment, one read: psutil's environ() parses it all
            with open(f"/proc/{pid}/environ", "rb") as handle:
                variables = handle.read().split(b"\0")
        except OSError:
            continue  # gone, or not ours to read
        if marker in variables:
            with contextlib.suppress(psutil.Error):
                owned.append(psutil.Process(pid))
    return owned


def kill_owner(owner: str, grace: float = 2.0) -> dict[int, str]:
    """Terminate, then kill, every process of `owner`; returns what had to be killed.

    The result maps each pid that was still alive to its name, so callers can
    report leaks.
    """
    victims = owned_processes(owner)
    described: dict[int, str] = {}
    for process in victims:
        with contextlib.suppress(psutil.Error):
            described[process.pid] = process.name()
            process.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(victims, timeout=grace)
    for process in alive:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(alive, timeout=grace)
    return described


class RunCancelled(RuntimeError):
    """The run was interrupted: no process may start any more."""


class Registry:
    """All owners alive in this run, so Ctrl-C and crashes can kill everything.

    Once `kill_all` has run, the registry is closed: `spawn` refuses, so no
    worker thread can start a process after the kill (the spawn and the check
    happen under one lock).
    """

    def __init__(self) -> None:
        self._owners: set[str] = set()
        self._lock = threading.Lock()
        self.closed = False
        self.started = 0  # processes this run started (the bench's count; adapters' own not)
        # CPU seconds of the processes that exited by themselves, by adapter and role
        self.cpu: dict[str, dict[str, float]] = {}
        self.environment: dict[str, str] = {}  # set in every process it starts

    def spawn(
        self,
        command: Sequence[str],
        *,
        owner: str,
        adapter: str | None = None,
        **options: Any,
    ) -> Spawned:
        """`spawn` under `owner`, unless the run is being torn down (RunCancelled).
        With `adapter`, the process's CPU is counted under it and its label
        (`cpu`) when `wait_exit` sees it exit. `environment` is set in every
        process's environment, over the inherited or given one."""
        if self.environment:
            base = options.get("env")
            options["env"] = {**(os.environ if base is None else base), **self.environment}
        with self._lock:
            if self.closed:
                raise RunCancelled(f"not starting {options.get('label', 'a process')}: interrupted")
            self._owners.add(owner)
            spawned = spawn(command, owner=owner, **options)
            self.started += 1
        if adapter is not None:
            role = spawned.label

            def count(seconds: float) -> None:
                with self._lock:
                    roles = self.cpu.setdefault(adapter, {})
                    roles[role] = roles.get(role, 0.0) + seconds

            spawned.on_cpu = count
        return spawned

    def owner_enter(self, name: str) -> None:
        with self._lock:
            if self.closed:
                raise RunCancelled("interrupted")
            self._owners.add(name)

    def owner_exit(self, name: str) -> None:
        with self._lock:
            self._owners.discard(name)

    def kill_all(self) -> None:
        with self._lock:
            self.closed = True
            owners = list(self._owners)
        for name in owners:
            kill_owner(name, grace=0.5)


def spawn_failure(label: str, command: list[str], adapter: Any, exc: OSError) -> str:
    """Why a command could not start, naming the command, the folder and the way out:
    the build for an adapter that has one, else where the command runs from."""
    if adapter.command("build") is not None:
        way_out = f"build it first (`python -m interop build --adapters {adapter.name}`)"
    else:
        root = adapter.manifest is not None and adapter.manifest.parent.name == "interop"
        way_out = (
            f"its commands run from {adapter.directory}"
            + (" (the SDK's root, as contract v1 runs them)" if root else "")
            + f": check that {command[0]!r} exists there or on PATH "
            "(e.g. the SDK's virtual environment is made)"
        )
    return (
        f"cannot start the {label} of {adapter.name!r}: {shlex.join(command)} in "
        f"{adapter.directory}: {exc.strerror}; {way_out}"
    )
