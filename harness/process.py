"""Running a tool's process: a new process group, a timeout, capped output, no secrets.

    run_process(["python", "-m", "pytest", "-q"], cwd=root, timeout=30)
      -> ToolResult(ok, "exit status 0\nstdout:\n...\nstderr:\n...")

`run_shell` (workspace.py) and command templates (commands.py) run through here. The
process starts in a new process group; on timeout, cancel or the run's deadline the
whole group is killed (``os.killpg``), so children started in the background die too.
Two threads drain the pipes keeping only the head and tail, so a chatty command can
neither deadlock nor fill memory. The environment is the harness's, minus secrets.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from contextlib import suppress
from pathlib import Path
from typing import IO

from .control import current
from .tools import DEFAULT_MAX_OUTPUT, ToolResult, cap


def run_process(argv: list[str], *, cwd: str | Path | None = None, timeout: float = 30,
                max_output: int = DEFAULT_MAX_OUTPUT) -> ToolResult:
    """Run ``argv`` in a new process group until it ends, times out or the run stops.

    Two threads drain the pipes, keeping only the head and tail, so a chatty command
    can neither deadlock nor fill memory. Stopping kills the whole group
    (``os.killpg``): children started in the background die too. The timeout is also
    cut to what is left of the run's ``max_seconds``.
    """
    control = current()
    stop = control.stop_reason() if control else None
    if stop:
        return ToolResult(False, f"Not run: the run stopped ({stop}).")
    left = control.seconds_left() if control else None
    limit = timeout if left is None else min(timeout, left)
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, env=child_env())
    keep = max(max_output // 2 - 100, 100)  # per stream, so both fit in max_output
    out, err = _Drain(proc.stdout, keep), _Drain(proc.stderr, keep)
    deadline = time.monotonic() + limit
    while proc.poll() is None or out.is_alive() or err.is_alive():
        stop = control.stop_reason() if control else None
        if stop is None and time.monotonic() >= deadline:
            stop = f"timed out after {limit:g} s"
        if stop:
            _kill_group(proc)
            break
        if proc.poll() is None:
            with suppress(subprocess.TimeoutExpired):
                proc.wait(0.05)
        else:  # the shell is done; a background child still holds the output open
            out.join(0.05), err.join(0.05)
    status = proc.wait()
    out.join(1), err.join(1)  # a process outside the group may keep a pipe open: move on
    head = f"exit status {status}"
    if stop:
        head += f" (stopped: {stop}; killed the command and its process group)"
    parts = [head] + [f"{name}:\n{text}" for name, text in
                      (("stdout", out.text()), ("stderr", err.text())) if text]
    return ToolResult(status == 0 and not stop, cap("\n".join(parts), max_output))


SECRET_NAME = re.compile(r"API_?KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


def child_env() -> dict[str, str]:
    """The environment for a tool's process, without secrets (``OPENAI_API_KEY`` & co.).

    Whatever a command prints goes to the model, the transcript and the call log: a
    key in its environment is one ``echo $OPENAI_API_KEY`` away from all three.
    """
    return {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}


def _kill_group(proc: subprocess.Popen) -> None:
    with suppress(ProcessLookupError, PermissionError):  # already gone
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows has no process groups: kill the process itself
            proc.kill()


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping about ``keep`` bytes: 2/3 from the head, 1/3 the tail."""

    def __init__(self, pipe: IO[bytes], keep: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.head_size, self.tail_size = pipe, keep * 2 // 3, keep // 3
        self.head, self.tail, self.total = b"", b"", 0
        self.start()

    def run(self) -> None:
        with self.pipe:
            for chunk in iter(lambda: self.pipe.read1(65536), b""):
                self.total += len(chunk)
                room = max(self.head_size - len(self.head), 0)
                self.head += chunk[:room]
                self.tail = (self.tail + chunk[room:])[-self.tail_size:]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {cut:,} bytes cut ...]\n" if cut > 0 else ""
        return (self.head.decode("utf-8", "replace") + middle
                + self.tail.decode("utf-8", "replace")).rstrip("\n")
