"""Running a tool's process: contained, with a timeout, capped output and no secrets.

    run_process(["python", "-m", "pytest", "-q"], cwd=root, timeout=30)
      -> ToolResult(ok, "exit status 0\\nstdout:\\n...\\nstderr:\\n...")

`run_shell` (workspace.py) and command templates (commands.py) run through here:

    the environment    an allowlist (`ALLOWED_ENV`), never the harness's own
    containment        bubblewrap where it works, else the reaper, else a process group
                       (sandbox.py): what the call started ends when the call ends
    the limits         processes, memory, file size, disk and (in bubblewrap) network and
                       /tmp: `Sandbox`, set and watched by the reaper (reaper.py)
    the clock          the call's timeout, cut to what is left of the run's max_seconds;
                       on timeout, cancel or the run's deadline, everything is killed
    the output         two threads drain the pipes keeping only the head and tail, so a
                       chatty command can neither deadlock nor fill memory
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path
from typing import IO

from .. import browser
from ..control import RunControl
from .sandbox import Sandbox, contain
from ..tools import DEFAULT_MAX_OUTPUT, ToolResult, cap

NO_PROCESSES = ("Error: this browser build cannot run programs (a browser tab has no "
                "processes); use the file tools, or run the course locally to run commands.")

# What a tool's process gets from the harness's environment, and why; nothing else.
# A denylist of secret-looking names always misses one (DATABASE_URL, GH_PAT,
# SSH_AUTH_SOCK, a password inside a URL): an allowlist cannot.
ALLOWED_ENV = {
    "PATH": "to find programs",
    "HOME": "where programs keep their settings (in the sandbox: an empty scratch folder)",
    "USER": "who runs the command (git, getpass)",
    "LOGNAME": "the same, for older programs",
    "LANG": "the locale: UTF-8 output decodes the same way here",
    "LANGUAGE": "the language of messages",
    "TERM": "what the programs may print (there is no terminal: output is piped)",
    "TZ": "the time zone dates are printed in",
    "TMPDIR": "where temporary files go (/tmp in the sandbox)",
    "PYTHONUTF8": "Python's own UTF-8 mode",
    "PYTHONIOENCODING": "the encoding of Python's output",
    "VIRTUAL_ENV": "the Python environment in use (its bin/ is already on PATH)",
    "SYSTEMROOT": "Windows: many programs fail to start without it",
    "COMSPEC": "Windows: the command interpreter",
    "PATHEXT": "Windows: which files are programs",
    "TEMP": "Windows: temporary files",
    "TMP": "Windows: temporary files",
}
ALLOWED_PREFIXES = ("LC_",)  # LC_ALL, LC_CTYPE, ...: the locale, piece by piece


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a tool's process: the allowlisted variables, plus ``extra``.

    Whatever a command prints goes to the model, the transcript and the call log: a
    key in its environment is one ``env`` away from all three. A tool that needs a
    variable gets it explicitly, through ``extra``.
    """
    env = {k: v for k, v in os.environ.items()
           if k.upper() in ALLOWED_ENV or k.upper().startswith(ALLOWED_PREFIXES)}
    return {**env, **(extra or {})}


def run_process(argv: list[str], *, cwd: str | Path | None = None, timeout: float = 30,
                max_output: int = DEFAULT_MAX_OUTPUT,
                env: Mapping[str, str] | None = None,
                control: RunControl | None = None,
                sandbox: Sandbox | None = None) -> ToolResult:
    """Run ``argv`` in ``cwd`` (its only writable folder, where sandboxed) until it ends,
    times out or the run stops; then nothing it started is left running.

    ``env`` adds variables to the allowlisted environment (`child_env`); ``control`` is
    the run's (the tool's argument): its cancel and deadline stop the process.
    ``sandbox`` is what the process may use (network, limits); None: `Sandbox()`, the
    defaults, with ``HARNESS_SANDBOX_NETWORK`` for the network. In a browser tab, which
    cannot start a process, the model reads so (`NO_PROCESSES`).
    """
    if browser.IN_BROWSER:
        return ToolResult(False, NO_PROCESSES)
    stop = control.stop_reason() if control else None
    if stop:
        return ToolResult(False, f"Not run: the run stopped ({stop}).")
    left = control.seconds_left() if control else None
    limit = timeout if left is None else min(timeout, left)
    if os.sep not in argv[0] and shutil.which(argv[0]) is None:
        raise FileNotFoundError(f"program not found: {argv[0]!r}")
    folder = Path(cwd if cwd is not None else os.getcwd()).resolve()
    wrapped, how = contain(argv, folder, sandbox)
    proc = subprocess.Popen(wrapped, cwd=folder, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, env=child_env(env))
    keep = max(max_output // 2 - 100, 100)  # per stream, so both fit in max_output
    out, err = _Drain(proc.stdout, keep), _Drain(proc.stderr, keep)
    deadline = time.monotonic() + limit
    while proc.poll() is None or out.is_alive() or err.is_alive():
        stop = control.stop_reason() if control else None
        if stop is None and time.monotonic() >= deadline:
            stop = f"timed out after {limit:g} s"
        if stop:
            _kill(proc, how)
            break
        if proc.poll() is None:  # wake when the output ends: the usual sign it is done
            if out.is_alive():
                out.join(0.05)
            else:
                with suppress(subprocess.TimeoutExpired):
                    proc.wait(0.05)
        else:  # done; what it left behind (here: its process group) ends with it
            _kill_group(proc)
            out.join(0.05), err.join(0.05)
    status = proc.wait()
    out.join(1), err.join(1)  # a process outside the group may keep a pipe open: move on
    head = f"exit status {status}"
    if stop:
        head += f" (stopped: {stop}; killed the command and its process group)"
    parts = [head] + [f"{name}:\n{text}" for name, text in
                      (("stdout", out.text()), ("stderr", err.text())) if text]
    return ToolResult(status == 0 and not stop, cap("\n".join(parts), max_output))


def _kill(proc: subprocess.Popen, how: str) -> None:
    """Stop the call: the reaper kills what is below it first; then the whole group."""
    if how == "reaper":
        with suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            proc.wait(2)
    _kill_group(proc)


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
