"""A process check shared by the test files (scripted steps use the public builders:
``harness.tool_call``, ``say``, ``parallel``).

A killed child can stay a zombie for a few seconds in some containers (its new parent
reaps it late), so for `pid_alive` "dead" means gone or a zombie.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    if not Path("/proc/self/stat").exists():  # no /proc (macOS): os.kill is all we have
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def all_dead(pids: list[int], within: float = 2.0) -> bool:
    """Wait up to ``within`` seconds for every pid to be dead."""
    deadline = time.monotonic() + within
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(pid_alive(p) for p in pids)
