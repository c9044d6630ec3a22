"""The reaper: without a sandbox, every process a tool call started still ends with it.

    python -I -S reaper.py HARNESS_PID bash -c "nohup sleep 999 & echo started"

A process that calls ``setsid`` (or ``nohup ... &`` in a shell that then exits) leaves
its process group; when its parent dies, Linux hands it to PID 1 and the harness loses
it. This small program sits between the harness and the command and asks Linux to hand
such orphans to *it* instead (``PR_SET_CHILD_SUBREAPER``). When the command ends, when
the harness sends SIGTERM (timeout, cancel) or when the harness itself dies
(``PR_SET_PDEATHSIG``), it kills every process below it, then ends the way the command
ended, so the harness reads the same exit status as without it.

It runs as a script (``python -I -S``: no site packages, no ``PYTHON*`` variables) and
imports nothing from the harness. Linux only: `sandbox.py` uses it where ``prctl`` and
``/proc`` exist and bubblewrap does not.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36


def descendants() -> list[int]:
    """Every process below this one, read from /proc (each one's parent pid)."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # ended while we looked
                continue
            parents.setdefault(ppid, []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def kill_all() -> None:
    """Kill everything below us and reap it; orphans of the killed come to us, so repeat."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pids = descendants()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # no child left at all
            if not pids:
                return
        time.sleep(0.005)


def end_like(status: int) -> None:
    """Exit as the command did: the same code, or killed by the same signal."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def stopped(signum: int, frame: object) -> None:
    """The harness says stop (or it died): kill everything, then die of SIGKILL."""
    kill_all()
    os.kill(os.getpid(), signal.SIGKILL)


def main(harness_pid: int, argv: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    signal.signal(signal.SIGTERM, stopped)
    if os.getppid() != harness_pid:  # the harness died before PDEATHSIG was set
        sys.exit(1)
    try:
        command = os.posix_spawnp(argv[0], argv, os.environ)
    except OSError as exc:
        print(f"cannot run {argv[0]!r}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans handed to us are reaped here too
        if pid == command:
            break
    kill_all()
    end_like(status)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
