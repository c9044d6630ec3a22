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
          --seccomp 9                ...and no Unix socket: socket files stay out of reach
          --unshare-ipc              no shared memory or queues with the host's processes
          --die-with-parent          the harness dies: the sandbox dies
          --new-session              no way to type into the person's terminal
          --cap-drop ALL             as root, no capability to remount / writable
          -- python reaper.py sandbox LIMITS bash -c "the command"

(``sh -c 'exec "$@" 9<FILTER'`` runs that line: bwrap reads the seccomp filter from a
descriptor, and any caller can start a plain list this way.)

The reaper sets the call's limits (`Sandbox`) before it starts the command and watches
them while it runs; the command cannot signal it (a namespace's PID 1 gets only the
signals it handles). bwrap and the reaper start with the child's environment
(process.py's allowlist), so they have nothing worth reading either. Where bubblewrap is
missing or cannot create namespaces (macOS, Windows, a container that forbids them),
tool processes run unconfined, with the allowlisted environment and, where the OS has
them, the same limits; `status()` says so in one line (`doctor` prints it) and the first
such call warns once. ``HARNESS_SANDBOX=off`` switches bubblewrap off (say, for an agent
that must ``pip install`` into your environment); ``HARNESS_SANDBOX_NETWORK=on`` gives
tool processes your network, Unix sockets included (``Sandbox(network=True)`` does it
for one workspace). An MCP server runs in this sandbox too (harness/mcp/server.py), with
the folders its args name writable whole and room to reserve address space.
"""

from __future__ import annotations

import atexit
import os
import platform
import re
import shutil
import struct
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
from .person import read_only_inside

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

    | field           | default  | what happens past it                                 |
    |-----------------|----------|------------------------------------------------------|
    | `network`       | off      | (off: no connection leaves the sandbox, not even to  |
    |                 |          | 127.0.0.1; None: ``HARNESS_SANDBOX_NETWORK=on``)     |
    | `processes`     | 256      | the call is stopped (in bubblewrap, not as root, the |
    |                 |          | kernel refuses the fork first; threads count there)  |
    | `memory`        | 1 GiB    | the call is stopped: its processes hold more than    |
    |                 |          | that together                                        |
    | `address_space` | `memory` | an allocation fails: a process reserves more address |
    |                 |          | space (reserved, not held: Node reserves 10 GiB for  |
    |                 |          | each WebAssembly memory; MCP servers get 64 GiB)     |
    | `file_size`     | 100 MiB  | a write fails: no file grows past it                 |
    | `tmp_size`      | 256 MiB  | /tmp, HOME and /dev/shm (each) are full: ENOSPC      |
    | `disk`          | 1 GiB    | the call is stopped once the workspace's disk has    |
    |                 |          | that much less free space than when it started       |

    Sizes are bytes. `network` and `tmp_size` need bubblewrap; the others hold on Linux
    with or without it (README: "What tool processes can see").
    """

    network: bool | None = None
    processes: int = 256
    memory: int = GiB
    file_size: int = 100 * MiB
    tmp_size: int = 256 * MiB
    disk: int = GiB
    address_space: int | None = None

    def __post_init__(self) -> None:
        if self.network not in (None, True, False):
            raise ValueError(f"Sandbox(network=...) is True, False or None, not {self.network!r}")
        for name in ("processes", "memory", "file_size", "tmp_size", "disk", "address_space"):
            value = getattr(self, name)
            if value is None and name == "address_space":  # None: as much as `memory`
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Sandbox({name}=...) must be a positive whole number, "
                                 f"not {value!r}")

    @property
    def has_network(self) -> bool:
        """Whether tool processes get the host's network (the setting, or the variable)."""
        if self.network is not None:
            return bool(self.network)
        return os.environ.get(NETWORK_ENV, "").strip().lower() in ("on", "1", "yes", "true")

    @property
    def address(self) -> int:
        """Address space a process may reserve: `address_space`, else `memory`."""
        return self.memory if self.address_space is None else self.address_space

    def reaper_limits(self) -> str:
        """The limits as the reaper reads them: ``processes=256,memory=...``."""
        return (f"processes={self.processes},memory={self.memory},address={self.address},"
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
        wrapped = [*bwrap_argv(bwrap, cwd, box, program, shown=shown, writable=writable),
                   "--", *reaper, "sandbox", box.reaper_limits(), *argv]
        filtered = _probe(bwrap)[1] and not box.has_network
        return (with_filter(wrapped, _filter_file()) if filtered else wrapped), "bwrap"
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

    ``writable`` are folders the person granted (an MCP server's ``--repository``):
    each is writable whole, its ``.git`` and virtual environments included, where
    ``cwd``'s protected names stay read-only. Only .env files read as empty in both.

    The order matters: a later mount hides an earlier one, so what is hidden comes
    first, then what must show through it (this Python, the program), then the
    workspace, its protected names, the granted folders (after: a grant inside the
    workspace is not made read-only again), the person's folders inside them (a skills
    folder, read-only: person.py), a home folder inside one of them (a
    workspace that holds /home), and the fresh /proc last (nothing may hide it).
    """
    box = sandbox or Sandbox()
    sized = ["--size", str(box.tmp_size)] if _has_size(bwrap) else []
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--remount-ro", "/dev",
            *sized, "--tmpfs", "/dev/shm", *sized, "--tmpfs", "/tmp"]
    hidden = hidden_folders()
    writable = [os.path.realpath(w) for w in writable]
    shown = _shown_through(["/tmp", *hidden], program, [*shown, *writable])
    argv += _hide(hidden, shown, sized, also=("/tmp",))
    if box.has_network:  # names still resolve where resolv.conf lives under /run
        resolver = os.path.dirname(os.path.realpath("/etc/resolv.conf"))
        if resolver.startswith("/run/") and os.path.isdir(resolver):
            argv += ["--ro-bind", resolver, resolver]
    bound = []
    if cwd is not None:
        root = str(cwd)
        argv += ["--bind", root, root, "--chdir", root, *protected_binds(cwd)]
        bound.append(root)
    for folder in writable:
        argv += ["--bind", folder, folder, *protected_binds(Path(folder), granted=True)]
        bound.append(folder)
    for folder in sorted({p for root in bound for p in read_only_inside(root)}):
        argv += ["--ro-bind", folder, folder]  # the person's (a skills folder): person.py
    for folder in bound:
        argv += _hide([p for p in hidden if p != folder and _inside(p, folder)], shown, sized)
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


def protected_binds(root: Path, *, granted: bool = False) -> list[str]:
    """bwrap arguments that keep ``root``'s protected names out of reach at any depth.

    Version control and virtual environments are bound read-only; .env files are covered
    by an empty read-only file (the file tools refuse to read them: so does the shell).
    Links are not followed. Past `MAX_WALK` entries the folders not yet walked are made
    read-only as a whole, so a huge workspace costs a bounded walk and fails closed.
    ``granted``: a folder the person gave a server to change: only its .env files.
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
                    if guard and (not granted or guard == _empty_file()):
                        binds += ["--ro-bind", guard, entry.path]
                    elif not guard and entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except OSError:  # unreadable, or gone while we looked: nothing to bind there
            continue
    if granted:  # the person's to change, as a whole: never read-only past the walk
        return binds
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


# -- Unix socket files: a seccomp filter ---------------------------------------------------
# --unshare-net cuts TCP and abstract sockets, not socket files: any one the sandbox can
# see (outside the homes, /tmp and /run: a database's, an IDE's, another project's) it
# could connect to. bwrap hands the kernel this filter (--seccomp), which every process
# in the sandbox keeps: socket(AF_UNIX) fails with EACCES, and so does a datagram
# socketpair (a datagram socket may send to any path). Connected pairs still work (pipes,
# asyncio, subprocess), and so does every other family. io_uring, which can make a
# socket without the socket call, answers ENOSYS (programs fall back to ordinary calls).
AF_UNIX, SOCK_DGRAM, EACCES, ENOSYS = 1, 2, 13, 38
SYS_SOCKET, SYS_SOCKETPAIR = 1, 8  # socketcall's first argument
X86_64, I386, AARCH64, ARM = 0xC000003E, 0x40000003, 0xC00000B7, 0x40000028  # AUDIT_ARCH_*
# Per architecture: socket, socketpair, io_uring_setup, and socketcall (32-bit x86: one
# call for all socket calls; its arguments are in memory, so a socketpair made through
# it is refused whatever its kind).
SYSCALLS = {X86_64: (41, 53, 425, None), I386: (359, 360, 425, 102),
            AARCH64: (198, 199, 425, None), ARM: (281, 288, 425, None)}
FILTERED_MACHINES = ("x86_64", "amd64", "aarch64", "arm64")


def unix_socket_filter() -> bytes:
    """The filter as classic BPF, the bytes bwrap's ``--seccomp`` reads: check the
    architecture, load the call's number, refuse the calls above, allow the rest."""
    load, jeq, and_, ret = 0x20, 0x15, 0x54, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, ALU|AND|K, RET
    nr, arch, arg0, arg1 = 0, 4, 16, 24  # offsets in struct seccomp_data (little-endian)
    allow, errno = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO
    program: list = [(load, arch)]
    program += [(jeq, a, f"arch {a:x}") for a in SYSCALLS] + [(ret, allow)]
    for a, (socket, pair, uring, call) in SYSCALLS.items():
        program += [f"arch {a:x}", (load, nr)]
        if a == X86_64:  # x32 programs: the same numbers with bit 30 set
            program.append((and_, 0xBFFFFFFF))
        program += [(jeq, socket, "socket"), (jeq, pair, "socketpair"), (jeq, uring, "nosys")]
        program += [(jeq, call, "socketcall")] if call else []
        program.append((ret, allow))
    program += ["socket", (load, arg0), (jeq, AF_UNIX, "deny"), (ret, allow),
                "socketpair", (load, arg0), (jeq, AF_UNIX, None, "allow"), (load, arg1),
                (and_, 0xF), (jeq, SOCK_DGRAM, "deny"), "allow", (ret, allow),
                "socketcall", (load, arg0), (jeq, SYS_SOCKET, "deny"),
                (jeq, SYS_SOCKETPAIR, "deny"), (ret, allow),
                "deny", (ret, errno | EACCES), "nosys", (ret, errno | ENOSYS)]
    return _assemble(program)


def _assemble(program: list) -> bytes:
    """``(code, k, jump if true, jump if false)`` instructions, with labels (strings) as
    jump targets, as struct sock_filter: a jump counts the instructions it skips."""
    labels, code = {}, []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append((*item, None, None)[:4])

    def skip(target: str | None, at: int) -> int:
        return 0 if target is None else labels[target] - at - 1

    return b"".join(struct.pack("=HBBI", op, skip(yes, at), skip(no, at), k)
                    for at, (op, k, yes, no) in enumerate(code))


_filter = ""


def _filter_file() -> str:
    """The filter, written once per process to a file bwrap reads through a descriptor
    ("" where it has no numbers for this machine: a seccomp filter is per architecture)."""
    global _filter
    if platform.machine().lower() not in FILTERED_MACHINES or sys.byteorder != "little":
        return ""
    if not _filter or not os.path.isfile(_filter):
        fd, path = tempfile.mkstemp(prefix="harness-seccomp-")
        with os.fdopen(fd, "wb") as f:
            f.write(unix_socket_filter())
        os.chmod(path, 0o444)
        atexit.register(lambda: os.path.exists(path) and os.unlink(path))
        _filter = path
    return _filter


def with_filter(argv: list[str], path: str) -> list[str]:
    """A bwrap command that loads the filter in ``path``: bwrap reads it from descriptor
    9, which a shell opens before it becomes bwrap (any caller can start this list)."""
    return ["/bin/sh", "-c", 'exec "$@" 9<"$0"', path, argv[0], "--seccomp", "9", *argv[1:]]


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
        sockets = ("not even a Unix socket" if _probe(bwrap)[1] else "though a Unix socket "
                   "file they see still answers (no seccomp filter here)")
        network = (f"have your network ({NETWORK_ENV}=on), Unix sockets included"
                   if box.has_network else
                   f"have no network ({NETWORK_ENV}=on gives them yours), {sockets}")
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
    problem, _ = _probe(bwrap)
    return (None, problem) if problem else (bwrap, None)


# What the probe runs with the filter: the filter holds if a Unix socket is refused.
REFUSED = ("import _socket\ntry: _socket.socket(1)\nexcept PermissionError: raise SystemExit(0)\n"
           "raise SystemExit(3)")


@cache
def _probe(bwrap: str) -> tuple[str | None, bool]:
    """Run this Python in the sandbox once per process: (None, whether the socket filter
    holds there too) if it works, else (why not, False)."""
    argv = [*bwrap_argv(bwrap), "--", sys.executable, "-I", "-S", "-c"]
    if _filter_file() and _run(with_filter([*argv, REFUSED], _filter_file())) is None:
        return None, True
    return _run([*argv, "pass"]), False


def _run(argv: list[str]) -> str | None:
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
