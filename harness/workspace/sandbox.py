"""The sandbox: a tool's process sees the workspace, not the harness or the person's home.

Without one, ``run_shell("tr '\\0' '\\n' < /proc/$PPID/environ")`` prints the harness's
own environment, API key included, whatever environment the child itself was given;
``cat ~/.local/share/jupyter/runtime/kernel-*.json`` and a connection to 127.0.0.1 run
code in the person's own Jupyter kernel. On Linux the harness runs tool processes
(`run_shell`, command templates) in bubblewrap, as Codex and Claude Code's sandbox
runtime do for their shells::

    bwrap --ro-bind / /              the system: readable, never writable
          --dev /dev                 a fresh /dev (read-only: its devices still work)...
          --size N --tmpfs /dev/shm  ...and /tmp: empty, in memory, at most `tmp_size`
          --size N --tmpfs /tmp
          --tmpfs /home, /root, HOME every home folder: empty (HOME is a scratch folder)
          --tmpfs /run               the host's sockets (D-Bus, docker.sock, /run/user)
          --ro-bind PYTHON PYTHON    this Python, if a tmpfs hid it (templates run it),
          --ro-bind REAPER REAPER    and the reaper, which runs the command (reaper.py)
          --bind ROOT ROOT           the workspace (the call's folder): writable...
          --ro-bind ROOT/a/.git ...  ...except its protected folders at any depth
          --ro-bind EMPTY ROOT/.env  ...and its .env files read as empty (`PROTECTED`)
          --proc /proc               a /proc that shows only the sandbox's processes
          --unshare-pid              a new PID namespace: the harness is not in it, and
          --as-pid-1                 the reaper is its PID 1: no signal from inside can
                                     stop it; when it ends, all the command started ends
          --unshare-net              no network: a loopback of its own, not the host's
          --unshare-ipc              no shared memory or queues with the host's processes
          --die-with-parent          the harness dies: the sandbox dies
          --new-session              no way to type into the person's terminal
          --cap-drop ALL             as root, no capability to remount / writable
          -- python reaper.py sandbox LIMITS bash -c "the command"

The reaper sets the call's limits (`Sandbox`) before it starts the command and watches
them while it runs; the command cannot signal it (a namespace's PID 1 gets only the
signals it handles). bwrap and the reaper start with the child's environment
(process.py's allowlist), so they have nothing worth reading either. Where bubblewrap is
missing or cannot create namespaces (macOS, Windows, a container that forbids them),
tool processes run unconfined, with the allowlisted environment and, where the OS has
them, the same limits; `status()` says so in one line (`doctor` prints it) and the first
such call warns once. ``HARNESS_SANDBOX=off`` switches bubblewrap off (say, for an agent
that must ``pip install`` into your environment); ``HARNESS_SANDBOX_NETWORK=on`` gives
tool processes your network (``Sandbox(network=True)`` does it for one workspace).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .. import browser

REAPER = Path(__file__).resolve().with_name("reaper.py")
# Names an agent may not change: what git, hg or svn run on the person's next command
# (hooks, core.fsmonitor), the virtual environments whose programs the person runs
# next, and the .env files that hold keys (.env.local too). Any folder holding
# pyvenv.cfg is a virtual environment, whatever its name.
PROTECTED = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".env"})
INSTALL = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
NETWORK_ENV = "HARNESS_SANDBOX_NETWORK"
# The workspace is walked before each sandboxed call to find protected names at any
# depth (about 3 microseconds an entry: 20,000 entries, some 60 ms). Past that, the
# folders not yet walked are made read-only as a whole (at most MAX_UNWALKED binds).
MAX_WALK, MAX_UNWALKED = 20_000, 64
# Where a tmpfs hides something that holds nothing to write: enough for mount points.
HIDE_SIZE = 1 << 20
# Never hidden as a "home", whatever HOME says (a daemon's HOME may be / or /var).
SYSTEM = frozenset({"/", "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64",
                    "/mnt", "/media", "/opt", "/proc", "/sbin", "/srv", "/sys", "/tmp",
                    "/usr", "/var", "/run"})
MiB, GiB = 1 << 20, 1 << 30
_warned = False


@dataclass(frozen=True)
class Sandbox:
    """What a tool's process may use: ``Workspace(root, sandbox=Sandbox(network=True))``.

    | field       | default  | what happens past it                                     |
    |-------------|----------|----------------------------------------------------------|
    | `network`   | off      | (off: no connection leaves the sandbox, not even to      |
    |             |          | 127.0.0.1; None reads ``HARNESS_SANDBOX_NETWORK=on``)    |
    | `processes` | 256      | the call is stopped (in bubblewrap, not as root, the     |
    |             |          | kernel refuses the fork first; threads count there too)  |
    | `memory`    | 1 GiB    | an allocation fails (address space, each process); the   |
    |             |          | call is stopped if its processes hold more together      |
    | `file_size` | 100 MiB  | a write fails: no file grows past it                     |
    | `tmp_size`  | 256 MiB  | /tmp, HOME and /dev/shm (each) are full: ENOSPC          |
    | `disk`      | 1 GiB    | the call is stopped once the workspace's disk has that   |
    |             |          | much less free space than when it started                |

    Sizes are bytes. `network` and `tmp_size` need bubblewrap; the others hold on Linux
    with or without it (README: "What tool processes can see").
    """

    network: bool | None = None
    processes: int = 256
    memory: int = GiB
    file_size: int = 100 * MiB
    tmp_size: int = 256 * MiB
    disk: int = GiB

    def __post_init__(self) -> None:
        if self.network not in (None, True, False):
            raise ValueError(f"Sandbox(network=...) is True, False or None, not {self.network!r}")
        for name in ("processes", "memory", "file_size", "tmp_size", "disk"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Sandbox({name}=...) must be a positive whole number, "
                                 f"not {value!r}")

    @property
    def has_network(self) -> bool:
        """Whether tool processes get the host's network (the setting, or the variable)."""
        if self.network is not None:
            return bool(self.network)
        return os.environ.get(NETWORK_ENV, "").strip().lower() in ("on", "1", "yes", "true")

    def reaper_limits(self) -> str:
        """The limits as the reaper reads them: ``processes=256,memory=...``."""
        return (f"processes={self.processes},memory={self.memory},"
                f"file={self.file_size},disk={self.disk}")


def contain(argv: list[str], cwd: Path, sandbox: Sandbox | None = None, *,
            shown: Iterable[str] = (), writable: Iterable[str] = ()) -> tuple[list[str], str]:
    """``argv`` wrapped for the best containment here, and which one: bwrap, reaper, none.
    ``shown``: more paths a hidden folder must not hide (read-only); ``writable``: more
    folders the command may write besides ``cwd`` (an MCP server's, harness/mcp/)."""
    box = sandbox or Sandbox()
    bwrap, _ = _sandbox()
    reaper = [sys.executable, "-I", "-S", str(REAPER)]
    if bwrap:
        program = shutil.which(argv[0]) or argv[0]
        return [*bwrap_argv(bwrap, cwd, box, program, shown=shown, writable=writable), "--",
                *reaper, "sandbox", box.reaper_limits(), *argv], "bwrap"
    _warn_once()
    if _can_reap():
        return [*reaper, str(os.getpid()), box.reaper_limits(), *argv], "reaper"
    if os.name == "posix" and sys.executable:  # macOS: the limits, then the command itself
        return [*reaper, "exec", box.reaper_limits(), *argv], "none"
    return argv, "none"


def is_protected(folder: Path, name: str) -> bool:
    """True if ``folder / name`` is one an agent may not change (any case: macOS ignores it)."""
    return _protected_name(name) or (folder / name / "pyvenv.cfg").is_file()


def _protected_name(name: str) -> bool:
    folded = name.casefold()
    return folded in PROTECTED or folded.startswith(".env.")


def _is_env_file(name: str) -> bool:
    folded = name.casefold()
    return folded == ".env" or folded.startswith(".env.")


def bwrap_argv(bwrap: str, cwd: Path | None = None, sandbox: Sandbox | None = None,
               program: str | None = None, *, shown: Iterable[str] = (),
               writable: Iterable[str] = ()) -> list[str]:
    """The bwrap command line (before ``--``) for a call whose writable folder is ``cwd``
    and whose command runs ``program``.

    The order matters: a later mount hides an earlier one, so what is hidden comes
    first, then what must show through it (this Python, the program), then the
    workspace, its protected names, a home folder inside it (a workspace that holds
    /home), and the fresh /proc last (nothing may hide it).
    """
    box = sandbox or Sandbox()
    sized = ["--size", str(box.tmp_size)] if _has_size(bwrap) else []
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev",
            *sized, "--tmpfs", "/dev/shm", *sized, "--tmpfs", "/tmp"]
    hidden = hidden_folders()
    writable = [os.path.realpath(w) for w in writable]
    shown = _shown_through(["/tmp", *hidden], program, [*shown, *writable])
    argv += _hide(hidden, shown, sized, also=("/tmp",))
    for folder in writable:
        argv += ["--bind", folder, folder]
    if box.has_network:  # names still resolve where resolv.conf lives under /run
        resolver = os.path.dirname(os.path.realpath("/etc/resolv.conf"))
        if resolver.startswith("/run/") and os.path.isdir(resolver):
            argv += ["--ro-bind", resolver, resolver]
    if cwd is not None:
        root = str(cwd)
        argv += ["--bind", root, root, "--chdir", root, *protected_binds(cwd)]
        argv += _hide([p for p in hidden if p != root and _inside(p, root)], shown, sized)
    argv += ["--proc", "/proc", "--setenv", "TMPDIR", "/tmp", "--unshare-pid", "--as-pid-1",
             "--unshare-ipc", *([] if box.has_network else ["--unshare-net"]),
             "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    return argv


def _hide(hidden: list[str], shown: list[str], sized: list[str],
          also: tuple[str, ...] = ()) -> list[str]:
    """A tmpfs over each hidden folder, then what must show through them (and through
    ``also``, hidden before). HOME becomes the call's scratch folder (``tmp_size``);
    the others hold nothing to write."""
    home, argv = _real(os.environ.get("HOME", "")), []
    for path in hidden:
        argv += [*(sized if path == home or not sized else ["--size", str(HIDE_SIZE)]),
                 "--tmpfs", path]
    for path in shown:
        if any(_inside(path, h) for h in [*also, *hidden]):
            argv += ["--ro-bind", path, path]
    return argv


def hidden_folders() -> list[str]:
    """What the sandbox empties besides /tmp, parents first: every home folder (yours by
    HOME and by the password file, /home, /root), /run with the host's sockets, and a
    Jupyter runtime or data folder named by the environment (kernel connection files)."""
    home = _real(os.environ.get("HOME", ""))
    names = ["/home", "/root", home, _password_home(), "/run"]
    names += [os.environ.get(v, "") for v in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR",
                                               "XDG_RUNTIME_DIR")]
    found = set()
    for name in names:
        path = _real(name)
        if (path and (path == "/run" or path not in SYSTEM) and os.path.isdir(path)
                and os.access(path, os.R_OK | os.X_OK)):
            found.add(path)
    # HOME gets its own scratch tmpfs even inside another hidden folder (/home, /tmp);
    # anything else inside one is hidden already.
    kept = [p for p in found if p == home or not any(
        q != p and _inside(p, q) for q in [*found, "/tmp"])]
    return sorted(kept, key=lambda p: (p.count("/"), p))


def _shown_through(hidden: list[str], program: str | None = None,
                   more: Iterable[str] = ()) -> list[str]:
    """What a hidden folder (a home, /tmp, /run) must not hide: the running Python (a venv
    under HOME, a clone under /tmp: templates run ``python`` as this one), the reaper,
    the command's own program, and the folders of PATH under /run (NixOS keeps its
    programs there). Each as written and as its links resolve."""
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable)),
              str(REAPER), program or "", *more]
    wanted += [p for p in os.environ.get("PATH", "").split(os.pathsep) if _inside(p, "/run")]
    found = {form for p in wanted if p and os.path.isabs(p) and os.path.exists(p)
             for form in (os.path.abspath(p), os.path.realpath(p))}
    # A hidden folder itself never shows through (a Python installed into HOME as its
    # prefix would show all of HOME): then the probe fails and status() says why.
    found = {p for p in found if p not in hidden and any(_inside(p, h) for h in hidden)}
    return sorted(p for p in found if not any(q != p and _inside(p, q) for q in found))


def protected_binds(root: Path) -> list[str]:
    """bwrap arguments that keep ``root``'s protected names out of reach at any depth.

    Version control and virtual environments are bound read-only; .env files are covered
    by an empty read-only file (the file tools refuse to read them: so does the shell).
    Links are not followed. Past `MAX_WALK` entries the folders not yet walked are made
    read-only as a whole, so a huge workspace costs a bounded walk and fails closed.
    """
    binds, todo, seen = [], deque([str(root)]), 0
    while todo and seen < MAX_WALK:
        folder = todo.popleft()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > MAX_WALK:
                        todo.appendleft(folder)  # not finished: read-only as a whole
                        break
                    guard = _guard(entry)
                    if guard:
                        binds += ["--ro-bind", guard, entry.path]
                    elif entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except OSError:  # unreadable, or gone while we looked: nothing to bind there
            continue
    rest = set(todo)
    while len(rest) > MAX_UNWALKED:  # too many: their parents instead, up to the root
        rest = {os.path.dirname(p) if p != str(root) else p for p in rest}
    unwalked = [arg for p in sorted(rest) if not any(q != p and _inside(p, q) for q in rest)
                for arg in ("--ro-bind", p, p)]
    return unwalked + binds  # first: a later bind of a whole folder would undo a mask


def _guard(entry: os.DirEntry) -> str | None:
    """What to bind over a protected entry (itself, read-only; an empty file over a .env
    file), or None for an ordinary one. A link is not followed: never protected here."""
    if entry.is_symlink():
        return None
    is_dir = entry.is_dir(follow_symlinks=False)
    if _protected_name(entry.name):
        return _empty_file() if not is_dir and _is_env_file(entry.name) else entry.path
    if is_dir and os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
        return entry.path
    return None


_empty = ""


def _empty_file() -> str:
    """An empty read-only file to bind over .env files; made once per process (again if a
    cleaner removed it)."""
    global _empty
    if not _empty or not os.path.isfile(_empty):
        fd, path = tempfile.mkstemp(prefix="harness-empty-")
        os.close(fd)
        os.chmod(path, 0o444)
        atexit.register(lambda: os.path.exists(path) and os.unlink(path))
        _empty = path
    return _empty


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _password_home() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):
        return ""


@cache
def _has_size(bwrap: str) -> bool:
    """bwrap 0.5 and later can cap a tmpfs (``--size``); older ones cannot."""
    try:
        shown = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(re.search(rb"^\s*--size\b", shown.stdout + shown.stderr, re.MULTILINE))


def status(sandbox: Sandbox | None = None) -> str:
    """One line: are tool processes sandboxed here, and if not, why not; their network
    and their limits."""
    if browser.IN_BROWSER:
        return ("sandbox: none needed: a browser tab runs no programs, so run_shell and "
                "command templates answer that they cannot, and the file tools work in the "
                "browser's own file system")
    box = sandbox or Sandbox()
    bwrap, problem = _sandbox()
    limits = (f"limits: {box.processes} processes, {_size(box.memory)} memory, "
              f"{_size(box.file_size)} a file, {_size(box.disk)} of disk a call")
    if bwrap:
        tmp = (f"{_size(box.tmp_size)} /tmp" if _has_size(bwrap)
               else "/tmp unlimited (this bwrap has no --size)")
        network = (f"have your network ({NETWORK_ENV}=on)" if box.has_network else
                   f"have no network ({NETWORK_ENV}=on gives them yours)")
        return ("sandbox: bubblewrap; tool processes cannot see the harness's environment "
                "or memory or your home folder, can write only in their workspace, and "
                f"{network}; {limits}, {tmp}")
    reap = " (a call's processes still end with it)" if _can_reap() else ""
    if not _can_reap():  # no /proc to watch: only what the OS itself enforces
        limits = (f"limits: {_size(box.file_size)} a file" if os.name == "posix"
                  else "no limits")
    return (f"sandbox: none ({problem}); tool processes run unconfined with an "
            f"allowlisted environment{reap} and your network; {limits}")


def _size(n: int) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


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
    """Run this Python in the sandbox once per process: None if it works, else why not."""
    argv = [*bwrap_argv(bwrap), "--", sys.executable, "-I", "-S", "-c", "pass"]
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
