"""A process check shared by the test files, and the old step builders.

Tests write ScriptedModel steps with the public builders (``harness.tool_call``, ``say``,
``parallel``). ``call``, ``step`` and ``final`` below are left only for
tests/test_scripted_model.py, which still imports them: delete them once it does not.

A killed child can stay a zombie for a few seconds in some containers (its new parent
reaps it late), so for `pid_alive` "dead" means gone or a zombie.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path


def call(call_id: str, name: str, args: dict | str | None = None) -> dict:
    """One tool call in the wire format; a dict ``args`` is sent as its JSON string."""
    arguments = args if isinstance(args, str) else json.dumps(args or {}, ensure_ascii=False)
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": arguments}}


def step(*calls: dict) -> dict:
    """An assistant message that calls these tools (in this order, in one reply)."""
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def final(text: str) -> dict:
    """An assistant message that answers without calling a tool."""
    return {"role": "assistant", "content": text}


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
