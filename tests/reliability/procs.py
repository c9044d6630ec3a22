"""Which processes a tool call left running, sandboxed or not.

A pid written by a sandboxed command (``echo $!``) is a pid inside its PID namespace and
means nothing out here, so these checks look for processes by where they run: any
process whose working folder is inside the call's folder was started by the call.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def running_in(folder: Path) -> list[int]:
    """Processes (not zombies) whose working folder is ``folder`` or below it."""
    folder, found = folder.resolve(), []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            cwd = Path(os.readlink(f"/proc/{name}/cwd"))
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone, or not ours to look at
            continue
        if state != "Z" and cwd.is_relative_to(folder):
            found.append(int(name))
    return found


def none_left_in(folder: Path, within: float = 2.0) -> bool:
    """Wait up to ``within`` seconds for every process in ``folder`` to be gone."""
    deadline = time.monotonic() + within
    while running_in(folder) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not running_in(folder)


def kill_all_in(folder: Path) -> None:
    """Clean up after a failed test: no test leaves a process behind."""
    for pid in running_in(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
