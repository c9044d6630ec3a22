"""Execution control: one budget for the whole run, and a way to stop it.

A run ends for one of these reasons, checked before each model request and before
each tool call:

    cancel.is_set()           -> "cancelled"   (anything with is_set(): threading.Event)
    time.monotonic() > limit  -> "time_limit"  (max_seconds, for the whole run)
    turns == max_turns        -> "turn_limit"  (checked before a model request)

A sub-agent gets its own turn budget but shares the parent's deadline and cancel, so
stopping the parent stops the child too. A model request that hangs is waited for in
a thread, so cancel still ends the run within a fraction of a second. Tools that run
for a while (``run_shell``, command templates) read the current `RunControl` and use
`run_process`, which kills the whole process group on timeout or cancel. Cancel is
cooperative for tools: a tool that blocks without looking at `current()` runs to its
end, and the run stops right after it, before the next call.

From the controlled-execution article (lesson 00 lists the sources), commands:

    CommandTool("query_record", "Look up an order record.",
                template="python tools/query_record.py --id {record_id}",
                params={"record_id": "the order id, e.g. A-1001"})

The model fills in named string parameters only; each value becomes exactly one argv
element (no shell, so ``; rm -rf /`` is just an odd id) and is refused if it starts
with ``-`` or holds a character outside a safe set. `CallLog` records the intent of
every call before it runs and its result after, as JSON lines.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, create_model

from .events import Event
from .tools import DEFAULT_MAX_OUTPUT, Tool, ToolResult, cap

_current: contextvars.ContextVar[RunControl | None] = contextvars.ContextVar(
    "harness_run_control", default=None
)


@dataclass
class RunControl:
    """The budget of one (sub-)agent run."""

    max_turns: int
    deadline: float | None = None  # time.monotonic() value, shared with sub-agents
    cancel: Any = None
    turns: int = 0

    @classmethod
    def start(cls, max_turns: int, max_seconds: float | None, cancel: Any) -> RunControl:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if cancel is not None and not callable(getattr(cancel, "is_set", None)):
            raise TypeError("cancel must have an is_set() method, e.g. threading.Event()")
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        return cls(max_turns, deadline, cancel)

    def child(self, max_turns: int) -> RunControl:
        """A budget for a sub-agent: its own turns, the parent's clock and cancel."""
        return RunControl(max_turns, self.deadline, self.cancel)

    def stop_reason(self) -> str | None:
        """``"cancelled"`` or ``"time_limit"`` if the run must stop now, else ``None``."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "time_limit"
        return None

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    @contextmanager
    def active(self) -> Iterator[RunControl]:
        """Make this the `current()` control while a run executes."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)


def current() -> RunControl | None:
    """The control of the run whose tool is executing now (``None`` outside a run)."""
    return _current.get()


class Stopped(Exception):
    """Raised by `RunControl.wait` when the run must stop; ``reason`` is the outcome."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def wait(control: RunControl | None, fn: Any) -> Any:
    """Call ``fn()``; if the run has a cancel or a deadline, stop waiting when it fires.

    The call runs in a daemon thread so a hung HTTP request cannot hold the run: on
    cancel or time out we stop waiting (raising `Stopped`) and let the thread finish
    on its own. Without cancel or deadline, ``fn`` simply runs here.
    """
    if control is None or (control.cancel is None and control.deadline is None):
        return fn()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.02)
        reason = control.stop_reason()
        if reason and worker.is_alive():
            raise Stopped(reason)
    if "error" in box:
        raise box["error"]
    return box["value"]


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


SAFE_VALUE = r"[\w .,:@+=/-]{1,200}"


def _no_option(value: str) -> str:
    if value.startswith("-"):
        raise ValueError("must not start with '-' (it would read as an option)")
    return value


class CommandTool(Tool):
    """A tool that runs a fixed command template; the model supplies only parameters.

    ``params`` maps each ``{placeholder}`` of the template to a description. A template
    starting with ``python`` runs with the interpreter that runs the harness. Each value
    must match ``pattern`` (a safe character set by default), must not start with
    ``-`` (no smuggled flags), and replaces its placeholder inside one argv element.
    """

    def __init__(self, name: str, description: str, *, template: str, params: dict[str, str],
                 cwd: str | Path | None = None, timeout: float = 30,
                 pattern: str = SAFE_VALUE, max_output: int = DEFAULT_MAX_OUTPUT) -> None:
        self.argv = shlex.split(template)
        if self.argv and self.argv[0] == "python":  # the interpreter running the harness
            self.argv[0] = sys.executable
        used = {p for token in self.argv for p in params if "{" + p + "}" in token}
        if used != set(params):
            raise ValueError(f"template {template!r} must use every parameter of {sorted(params)}")
        if "{" in self.argv[0]:
            raise ValueError("the program of a command template must be fixed, not a parameter")
        fields = {p: (Annotated[str, AfterValidator(_no_option)],
                      Field(description=d, pattern=f"^(?:{pattern})$"))
                  for p, d in params.items()}
        args_model = create_model(f"{name}_args", __config__=ConfigDict(extra="forbid"), **fields)
        super().__init__(name, description, args_model, self._run, max_output=max_output)
        self.cwd, self.timeout = cwd, timeout

    def _run(self, **values: str) -> ToolResult:
        argv = [token.format_map(values) if "{" in token else token for token in self.argv]
        return run_process(argv, cwd=self.cwd, timeout=self.timeout, max_output=self.max_output)


class CallLog:
    """Intent before, result after: a record of every tool call (an `Agent` observer).

    Use it with ``Agent(..., observers=[log])``. Each entry is a dict; with ``path`` the
    entries are also appended to a JSON-lines file as they happen, so a crash leaves
    the intent of the call that was running.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.entries: list[dict] = []
        self.path = Path(path) if path else None

    def on_event(self, event: Event) -> None:
        if event.type == "tool_call":
            self._write({"phase": "intent", "agent_id": event.agent_id, "call_id": event.call_id,
                         "tool": event.tool_name, "arguments": event.arguments})
        elif event.type == "tool_result":
            self._write({"phase": "result", "agent_id": event.agent_id, "call_id": event.call_id,
                         "tool": event.tool_name, "status": event.status, "ok": event.ok,
                         "output": cap(event.output, 2000)})

    def unfinished(self) -> list[dict]:
        """Calls whose intent was logged but whose result never came: report, never retry."""
        done = {(e["agent_id"], e["call_id"]) for e in self.entries if e["phase"] == "result"}
        return [e for e in self.entries
                if e["phase"] == "intent" and (e["agent_id"], e["call_id"]) not in done]

    def _write(self, entry: dict) -> None:
        self.entries.append(entry)
        if self.path:
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False, default=str) + "\n")
