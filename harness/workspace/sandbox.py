"""The sandbox: a tool's process sees the workspace, not the harness that started it.

Without one, ``run_shell("tr '\\0' '\\n' < /proc/$PPID/environ")`` prints the harness's
own environment, API key included, whatever environment the child itself was given.
On Linux the harness runs tool processes (`run_shell`, command templates) in
bubblewrap, as Codex and Claude Code's sandbox runtime do for their shells::

    bwrap --ro-bind / /              the system: readable, never writable
          --dev /dev --tmpfs /tmp    a fresh /dev; scratch space that vanishes with the call
          --ro-bind PYTHON PYTHON    this Python, if it lives under /tmp (templates run it)
          --bind ROOT ROOT           the workspace (the call's folder): writable...
          --ro-bind ROOT/.git ...    ...except its protected folders (`PROTECTED`)
          --proc /proc               a /proc that shows only the sandbox's processes
          --unshare-pid              a new PID namespace: the harness is not in it, and
                                     when the command ends, everything it started ends
          --die-with-parent          the harness dies: the sandbox dies
          --new-session              no way to type into the person's terminal
          --cap-drop ALL             as root, no capability to remount / writable
          -- bash -c "the command"

bwrap itself starts with the child's environment (process.py's allowlist), so the
sandbox's PID 1 has nothing worth reading either. Where bubblewrap is missing or cannot
create namespaces (macOS, Windows, a container that forbids them), tool processes run
as before, with the allowlisted environment; `status()` says so in one line (`doctor`
prints it) and the first such call warns once. On Linux the `reaper` still makes sure
no process outlives its call. ``HARNESS_SANDBOX=off`` switches the sandbox off (say, for
an agent that must ``pip install`` into your environment).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from functools import cache
from pathlib import Path

REAPER = Path(__file__).with_name("reaper.py")
# Names an agent may not change: what git, hg or svn run on the person's next command
# (hooks, core.fsmonitor), the virtual environments whose programs the person runs
# next, and the .env files that hold keys (.env.local too). Any folder holding
# pyvenv.cfg is a virtual environment, whatever its name.
PROTECTED = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".env"})
INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
_warned = False


def contain(argv: list[str], cwd: Path) -> tuple[list[str], str]:
    """``argv`` wrapped for the best containment here, and which one: bwrap, reaper, none."""
    bwrap, _ = _sandbox()
    if bwrap:
        return [*bwrap_argv(bwrap, cwd), "--", *argv], "bwrap"
    _warn_once()
    if _can_reap():
        return [sys.executable, "-I", "-S", str(REAPER), str(os.getpid()), *argv], "reaper"
    return argv, "none"


def is_protected(folder: Path, name: str) -> bool:
    """True if ``folder / name`` is one an agent may not change (any case: macOS ignores it)."""
    folded = name.casefold()
    return (folded in PROTECTED or folded.startswith(".env.")
            or (folder / name / "pyvenv.cfg").is_file())


def bwrap_argv(bwrap: str, cwd: Path | None = None) -> list[str]:
    """The bwrap command line (before ``--``) for a call whose writable folder is ``cwd``.

    The order matters: a later mount hides an earlier one, so the workspace comes after
    /tmp (it may live there) and the fresh /proc comes last (nothing may hide it).
    """
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in _interpreter_under_tmp():  # templates run this Python: keep it in sight
        argv += ["--ro-bind", path, path]
    if cwd is not None:
        argv += ["--bind", str(cwd), str(cwd), "--chdir", str(cwd)]
        with os.scandir(cwd) as entries:
            argv += [arg for e in entries if is_protected(cwd, e.name) and not e.is_symlink()
                     for arg in ("--ro-bind", e.path, e.path)]
    argv += ["--proc", "/proc", "--setenv", "TMPDIR", "/tmp", "--unshare-pid",
             "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return argv


def _interpreter_under_tmp() -> list[str]:
    """The folders of the running Python (a venv made in a clone under /tmp, say) that the
    sandbox's fresh /tmp would hide: command templates run ``python`` as this one."""
    tmp = Path("/tmp").resolve()
    found = {os.path.abspath(p) for p in (sys.prefix, sys.base_prefix,
                                          os.path.dirname(sys.executable),
                                          os.path.dirname(os.path.realpath(sys.executable)))
             if p and Path(p).resolve().is_relative_to(tmp) and os.path.isdir(p)}
    return sorted(found)


def status() -> str:
    """One line: are tool processes sandboxed here, and if not, why not."""
    bwrap, problem = _sandbox()
    if bwrap:
        return ("sandbox: bubblewrap; tool processes cannot see the harness's environment "
                "or memory, and can write only in their workspace")
    reap = " (a call's processes still end with it)" if _can_reap() else ""
    return (f"sandbox: none ({problem}); tool processes run unconfined with an "
            f"allowlisted environment{reap}")


def _sandbox() -> tuple[str | None, str | None]:
    """(bwrap's path, None) where it works; else (None, why not)."""
    if _switched_off():
        return None, "switched off by HARNESS_SANDBOX"
    if not sys.platform.startswith("linux"):
        return None, f"bubblewrap needs Linux, this is {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, f"bwrap not found: {INSTALL}"
    problem = _probe(bwrap)
    return (None, problem) if problem else (bwrap, None)


@cache
def _probe(bwrap: str) -> str | None:
    """Run ``true`` in the sandbox once per process: None if it works, else why not."""
    argv = [*bwrap_argv(bwrap), "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap cannot start: {exc}"
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no reason"]
        return f"bwrap cannot create its namespaces here: {reason[-1][:120]}"
    return None


def _switched_off() -> bool:
    return os.environ.get("HARNESS_SANDBOX", "").strip().lower() in ("off", "0", "no", "false")


def _can_reap() -> bool:
    return sys.platform.startswith("linux") and Path("/proc/self/stat").exists()


def _warn_once() -> None:
    global _warned
    if not _warned and not _switched_off():  # who switched it off knows
        _warned = True
        warnings.warn(f"harness: {status()}. A tool process can read this process's "
                      "environment (your API key too) and write outside the workspace.",
                      RuntimeWarning, stacklevel=4)
