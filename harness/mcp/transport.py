"""How a stdio server's process is started, read, and stopped: the harness's rules.

The SDK's own ``stdio_client`` starts a command with a few inherited variables (HOME,
PATH, USER...) merged over the config's, and reads each line of the server's output
however long it grows. This transport, which the SDK's `Client` takes like any other,
keeps the protocol the SDK's and changes only the process around it:

    environment    process.py's allowlist, plus the variables the config names
    containment    the sandbox of tool processes (sandbox.py), where the OS has one
    a long line    more than ``max_line`` bytes without a newline: the server is stopped
                   (one line is one message; a flood cannot fill the harness's memory)
    stderr         the last kilobytes are kept; the error that says why it died shows
                   the lines that give the cause, not the stack frames under them (`cause`)
    stopping       `kill()` ends it and everything it started at once, from any thread
    unconfined     a server run with ``sandbox=False`` still runs under the reaper, with
                   no limits (`reaped`): what it starts, even in a session of its own
                   (``setsid``), ends when it stops

Messages are one JSON-RPC object per line, parsed by the SDK's own message types.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

from ..workspace.sandbox import REAPER

MAX_LINE = 4 << 20  # bytes in one message from a server: 4 MiB
STDERR_KEPT = 16384  # bytes of a server's stderr kept for its error message
CAUSE_LINES, CAUSE_CHARS = 8, 800  # of them, what the error shows: the last lines that say why
# Lines of a stack trace say where, not why: a Node frame ("    at f (file.js:1:2)",
# node:internal/...), a Python frame ('  File "x.py", line 3, in f') and the code line under
# it, Node's "file.js:12" and the code line under it, the carets under code, a
# traceback's header, an exception group's rulers, Node's version at the end. The cause
# is the line above them (Node) or below them (Python).
FRAME = re.compile("|".join([
    r"^\s+at\s", r"node:internal/", r'^\s*File ".*", line \d+', r"^\s*[~^]+\s*$",
    r"^\s*Traceback \(most recent call last\)", r"^\s*\+[-+]", r"Exception Group Traceback",
    r"^\s*\[Previous line repeated", r"^\s*\.\.\. \d+ (more|lines)", r"^Node\.js v\d"]))
PYTHON_FRAME = re.compile(r'^\s*File ".*", line \d+')  # its next line, indented, is code
NODE_SOURCE = re.compile(r"^\S+\.[cm]?[jt]sx?:\d+$")  # Node's "file.js:12": its next line is code
GUTTER = re.compile(r"^(\s*\|)+")  # the margin of an exception group's traceback


class ServerProcess:
    """One server process: started by `open`, stopped by `kill` (from any thread)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path | None, *,
                 on_end: Callable[[], None] = lambda: None, max_line: int = MAX_LINE,
                 reaper: bool = False) -> None:
        self.argv, self.env, self.cwd, self.max_line = argv, env, cwd, max_line
        self.reaper = reaper  # argv runs the reaper (reaper.py) in its harness-pid mode
        self.on_end = on_end  # called (in the server's loop) when its output ends
        self.pid: int | None = None
        self.ended = False  # its output ended: it exited, or was stopped
        self.why: str | None = None  # why the harness stopped it, if it did
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0

    def stderr_tail(self) -> str:
        """The end of what the server wrote to stderr (its traceback, usually)."""
        text = b"".join(self._stderr).decode("utf-8", "replace")
        return text[-STDERR_KEPT:].strip()

    def kill(self, why: str | None = None) -> None:
        """Stop the server and everything it started, now. Under the reaper: SIGTERM to
        it, and it kills every process below it (in sessions of their own too), then
        itself; a SIGKILL to the group would kill it before it could. Else: SIGKILL to
        the server's process group."""
        if why and not self.why:
            self.why = why
        if self.pid is not None and self.reaper:
            with suppress(ProcessLookupError, PermissionError, OSError):
                os.kill(self.pid, signal.SIGTERM)
        elif self.pid is not None:
            self._kill_group()

    def _kill_group(self) -> None:
        with suppress(ProcessLookupError, PermissionError, OSError):
            if os.name == "posix":
                os.killpg(self.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows
                os.kill(self.pid, signal.SIGTERM)

    @asynccontextmanager
    async def open(self) -> AsyncIterator[tuple[Any, Any]]:
        """The SDK's `Transport`: (read stream, write stream) while the process lives."""
        process = await anyio.open_process(self.argv, env=self.env, cwd=self.cwd,
                                           stderr=subprocess.PIPE,
                                           start_new_session=os.name == "posix")
        self.pid = process.pid
        read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

        async def stdout_reader() -> None:
            pending = bytearray()
            async with read_in:
                with suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                              anyio.BrokenResourceError, OSError):
                    async for chunk in process.stdout:
                        pending += chunk
                        *lines, rest = pending.split(b"\n")
                        pending = bytearray(rest)
                        for line in lines:
                            if line.strip():
                                await read_in.send(_parse(line))
                        if len(pending) > self.max_line:
                            self.kill(f"it wrote a line of more than {self.max_line:,} bytes")
                            break
            self.ended = True
            self.on_end()

        async def stderr_reader() -> None:
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                          anyio.BrokenResourceError, OSError):
                async for chunk in process.stderr:
                    self._stderr.append(chunk)
                    self._stderr_size += len(chunk)
                    while self._stderr_size > STDERR_KEPT and len(self._stderr) > 1:
                        self._stderr_size -= len(self._stderr.popleft())

        async def stdin_writer() -> None:
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                async with write_out:
                    async for message in write_out:
                        data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                        await process.stdin.send(data.encode() + b"\n")

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(stdout_reader)
                tasks.start_soon(stderr_reader)
                tasks.start_soon(stdin_writer)
                try:
                    yield read_out, write_in
                finally:
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop(process)

    async def _stop(self, process: Any) -> None:
        """Close its stdin, give it a moment to go, then end its group."""
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
        with anyio.move_on_after(0.5):
            while process.returncode is None:
                await anyio.sleep(0.01)
        if process.returncode is None:
            self.kill()
            with anyio.move_on_after(2):
                await process.wait()
        if process.returncode is None and self.reaper:  # the reaper did not end: its group
            self._kill_group()
            with anyio.move_on_after(1):
                await process.wait()
        if process.returncode is not None:  # reaped: its pid may be another's from now on
            self.pid = None
        for stream in (process.stdout, process.stderr):
            with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stream.aclose()
        # asyncio keeps the pipes' transport open until it is collected, after its loop
        # has closed ("Event loop is closed" at exit): close it while the loop runs.
        transport = getattr(getattr(process, "_process", None), "_transport", None)
        with suppress(Exception):
            transport.close()


def cause(stderr: str, lines: int = CAUSE_LINES, chars: int = CAUSE_CHARS) -> str:
    """What a server's stderr says went wrong: its last ``lines`` lines that are not stack
    frames (`FRAME`), joined by " | ", at most ``chars`` characters (the last kept)."""
    kept: list[str] = []
    code_next = code_maybe = False
    for line in stderr.splitlines():
        line = GUTTER.sub("", line).rstrip()
        skip = (code_next or (code_maybe and line[:1].isspace()) or FRAME.search(line)
                or NODE_SOURCE.match(line))
        code_next, code_maybe = bool(NODE_SOURCE.match(line)), bool(PYTHON_FRAME.match(line))
        if not skip and line.strip() and (not kept or kept[-1] != line.strip()):
            kept.append(line.strip()[:300])
    shown: list[str] = []
    for line in reversed(kept[-lines:]):
        if shown and sum(len(s) + 3 for s in shown) + len(line) > chars:
            break
        shown.insert(0, line)
    return " | ".join(shown)[-chars:]


def _parse(line: bytes) -> SessionMessage | Exception:
    """One line as the SDK's message type; a bad line is handed on as the error it is."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


def reaped(argv: list[str]) -> tuple[list[str], str]:
    """``argv`` under the reaper, with no limits (a server the person chose to run
    unconfined), and how: ``reaper``, or ``none`` where there is no /proc to watch
    (macOS, Windows: then its process group is what ends with it)."""
    argv = [shutil.which(argv[0]) or argv[0], *argv[1:]]
    if not (sys.platform.startswith("linux") and Path("/proc/self/stat").exists()):
        return argv, "none"
    return [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), "none", *argv], "reaper"
