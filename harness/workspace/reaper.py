"""The reaper: every process a tool call started ends with it, and stays within its limits.

    python -I -S reaper.py HARNESS_PID processes=256,memory=...,address=...,file=...,disk=... \\
        bash -c "nohup sleep 999 & echo started"

A process that calls ``setsid`` (or ``nohup ... &`` in a shell that then exits) leaves
its process group; when its parent dies, Linux hands it to PID 1 and the harness loses
it. This small program sits between the harness and the command and asks Linux to hand
such orphans to *it* instead (``PR_SET_CHILD_SUBREAPER``). When the command ends, when
the harness sends SIGTERM (timeout, cancel) or when the harness itself dies
(``PR_SET_PDEATHSIG``), it kills every process below it, then ends the way the command
ended, so the harness reads the same exit status as without it.

It also holds the call to its limits (`sandbox.Sandbox`), set before the command starts:

    RLIMIT_AS      address space, each process: an allocation past it fails (MemoryError)
    RLIMIT_FSIZE   file size: a write past it fails (EFBIG, or SIGXFSZ ends the writer)
    RLIMIT_NPROC   processes: set only in a user namespace of the sandbox's own, the one
                   place the kernel counts the sandbox's processes alone (root is exempt)
    the watch      while the command runs: more processes below it than allowed, more
                   memory resident in them together, or that much less free space on
                   the workspace's disk than at the start, and it kills them all and
                   says why on stderr (exit status 137)

The limits ``none`` set nothing and watch nothing: the reaper only waits for the command
and ends what it left (an MCP server run unconfined, which may live for hours).

Modes, by the first argument: the harness's pid (Linux without bubblewrap, as above),
``sandbox`` (inside bubblewrap, as the PID namespace's PID 1: no signal the command
sends reaches it, and when it exits the kernel ends every process left; the limits and
the watch), or ``exec`` (no /proc, say macOS: set the limits, then become the command).
It runs as a script (``python -I -S``: no site packages, no ``PYTHON*`` variables),
imports nothing from the harness, and little else: it starts with every sandboxed call.
"""

from __future__ import annotations

import _signal as signal  # the C module: ``signal`` loads enum, some 10 ms a call
import os
import sys
import time

PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
STOPPED = 137  # the exit status of a call the watch stopped (as if killed by SIGKILL)
# The watch looks every TICK seconds at least, and spends at most a fifth of a core on it.
TICK, MAX_TICK = 0.01, 0.5
# Python ignores these; a command it starts must not inherit that (subprocess resets them).
RESET = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ")
              if hasattr(signal, name))


def descendants() -> list[int]:
    """Every process below this one, read from /proc (each one's parent pid)."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # ended while we looked
                continue
            parents.setdefault(ppid, []).append(int(name))
    found, todo = [], [os.getpid()]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def resident(pid: int) -> int:
    """The memory a process holds that no file backs: anonymous and shared (bytes)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith((b"RssAnon:", b"RssShmem:")):
                    total += int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return total


def free_disk() -> int:
    """Free bytes on the disk of the current folder (the workspace)."""
    try:
        found = os.statvfs(".")
    except OSError:
        return 0
    return found.f_bfree * found.f_frsize


def kill_all() -> None:
    """Kill everything below us and reap it; orphans of the killed come to us, so repeat."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        pids = descendants()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # no child left at all
            if not pids:
                return
        time.sleep(0.005)


def end_like(status: int, as_init: bool = False) -> None:
    """Exit as the command did: the same code, or killed by the same signal (as PID 1,
    which no signal of its own namespace kills, with 128 + the signal, as bwrap does)."""
    code = os.waitstatus_to_exitcode(status)
    if code < 0 and as_init:
        sys.exit(128 - code)
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def stopped(signum: int, frame: object) -> None:
    """The harness says stop (or it died): kill everything, then die of SIGKILL."""
    kill_all()
    os.kill(os.getpid(), signal.SIGKILL)


def parse(text: str) -> dict[str, int]:
    """``processes=256,memory=1073741824,...`` as a dict; ``none``: an empty one."""
    if text == "none":
        return {}
    return {key: int(value) for key, value in (part.split("=") for part in text.split(","))}


def set_limits(limits: dict[str, int]) -> None:
    """Lower this process's limits (the command inherits them); never raise one."""
    if not limits:
        return
    try:
        import resource
    except ImportError:  # Windows
        return
    wanted = [(resource.RLIMIT_FSIZE, limits["file"])]
    if hasattr(resource, "RLIMIT_AS"):
        wanted.append((resource.RLIMIT_AS, limits["address"]))
    if hasattr(resource, "RLIMIT_NPROC") and counted_alone():
        wanted.append((resource.RLIMIT_NPROC, limits["processes"] + tasks()))
    for which, value in wanted:
        try:
            _, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))
        except (OSError, ValueError):  # this OS does not take it: the watch still does
            pass


def counted_alone() -> bool:
    """True in a user namespace of our own (bubblewrap's, not as root): there the kernel
    counts RLIMIT_NPROC over this namespace's processes only, not all of the user's."""
    if os.geteuid() == 0:  # root's processes are never counted against it
        return False
    try:
        with open("/proc/self/uid_map", encoding="ascii") as f:
            return f.read().split() != ["0", "0", "4294967295"]
    except OSError:
        return False


def tasks() -> int:
    """Threads this user runs that we can see (in a sandbox: its own, a handful)."""
    count, uid = 0, os.getuid()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


class Watch:
    """The call's limits, looked at while it runs: the process count at every look (in
    the sandbox a listing of /proc: only the call's processes are there), the memory
    its processes hold and the disk as often as their cost allows."""

    def __init__(self, limits: dict[str, int], in_sandbox: bool) -> None:
        self.limits, self.in_sandbox = limits, in_sandbox
        self.free_at_start, self.next_full, self.tick = free_disk(), 0.0, TICK

    def processes(self) -> list[int]:
        if self.in_sandbox:  # we are PID 1 there: every other process is the call's
            me = os.getpid()
            return [int(n) for n in os.listdir("/proc") if n.isdigit() and int(n) != me]
        return descendants()

    def past(self, full: bool = False) -> tuple[str, str] | None:
        """The limit the call is past (in words, and its setting), or None; sets the
        time to the next look, so that looking takes at most a fifth of a core."""
        began = time.monotonic()
        limits, pids = self.limits, self.processes()
        self.tick = min(MAX_TICK, max(TICK, 5 * (time.monotonic() - began)))
        if len(pids) > limits["processes"]:
            return f"it ran more than {limits['processes']} processes", "processes"
        if not full and began < self.next_full:
            return None
        memory = sum(resident(pid) for pid in pids)
        used = self.free_at_start - free_disk()
        self.next_full = time.monotonic() + min(MAX_TICK, 4 * (time.monotonic() - began))
        if memory > limits["memory"]:
            return (f"its processes held {memory >> 20} MiB of memory together, more than "
                    f"{limits['memory'] >> 20} MiB", "memory")
        if used > limits["disk"]:
            return (f"it took {used >> 20} MiB of the workspace's disk, more than "
                    f"{limits['disk'] >> 20} MiB", "disk")
        return None


def watch(command: int, looking: Watch) -> int:
    """Wait for the command, looking at its limits between; its wait status. The last
    look comes after it ends: what it left running counts too."""
    status = None
    while status is None:
        try:
            while True:
                pid, ended = os.waitpid(-1, os.WNOHANG)  # orphans handed to us too
                if pid == 0:
                    break
                if pid == command:
                    status = ended
                    break
        except ChildProcessError:  # cannot happen while the command runs: be safe
            status = 0
        past = looking.past(full=status is not None)
        if past:
            reason, setting = past
            print(f"harness: the command was stopped: {reason} (the limit is set by "
                  f"Sandbox({setting}=...))", file=sys.stderr, flush=True)
            if not looking.in_sandbox:  # in the sandbox, our exit ends every process
                kill_all()
            sys.exit(STOPPED)
        if status is None:
            signal.sigtimedwait([signal.SIGCHLD], looking.tick)  # wakes when a child ends
    return status


def wait(command: int) -> int:
    """No limits to watch: wait for the command (reaping the orphans handed to us), its
    wait status."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == command:
            return status


def cannot_run(program: str, exc: OSError, in_sandbox: bool = False) -> str:
    """Why the command did not start. A program that is there but "not found" lacks the
    interpreter its ``#!`` line names (a venv's Python, linked to one in a home folder the
    sandbox hides): name that one, not the program."""
    found = [os.path.join(folder, program) for folder in
             ([""] if "/" in program else os.environ.get("PATH", "").split(os.pathsep))]
    path = next((f for f in found if os.path.isfile(f)), "")
    if exc.errno != 2 or not path:  # ENOENT for a file that is there: its interpreter
        return f"cannot run {program!r}: {exc.strerror}"
    try:
        with open(path, "rb") as f:
            line = f.readline(512)
    except OSError:
        line = b""
    named = line[2:].split()[:1] if line.startswith(b"#!") else []
    if not named:
        return f"cannot run {program!r}: it is there, but the loader it needs is not"
    interpreter = os.fsdecode(named[0])
    target = os.path.realpath(interpreter)
    link = f" (a link to {target!r})" if target != interpreter else ""
    hidden = " in the sandbox (it hides home folders and /tmp)" if in_sandbox else ""
    return (f"cannot run {program!r}: its interpreter {interpreter!r}{link}, named on its "
            f"#! line, is not there{hidden}")


def become(limits: dict[str, int], argv: list[str]) -> None:
    """``exec`` mode: the limits, the signals a command expects, then the command."""
    set_limits(limits)
    for signum in RESET:
        signal.signal(signum, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        print(cannot_run(argv[0], exc), file=sys.stderr)
        sys.exit(127)


def main(mode: str, limits: dict[str, int], argv: list[str]) -> None:
    if mode == "exec":
        become(limits, argv)
    in_sandbox = mode == "sandbox"
    if in_sandbox:  # PID 1 of bwrap's namespace (--as-pid-1): no signal sent from inside
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # reaches us unless we handle it,
        # so the command can neither kill nor stop the watch; when we exit, the kernel
        # kills every process left in the namespace; bwrap's --die-with-parent kills us
    else:
        import ctypes  # not in the sandbox: some 8 ms a call

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        signal.signal(signal.SIGTERM, stopped)
        if os.getppid() != int(mode):  # the harness died before PDEATHSIG was set
            sys.exit(1)
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGCHLD])  # for sigtimedwait
    looking = Watch(limits, in_sandbox) if limits else None  # the disk's free space now
    set_limits(limits)
    try:
        command = os.posix_spawnp(argv[0], argv, os.environ, setsigmask=(), setsigdef=RESET)
    except OSError as exc:
        print(cannot_run(argv[0], exc, in_sandbox), file=sys.stderr)
        sys.exit(127)
    status = watch(command, looking) if looking else wait(command)
    if not in_sandbox:
        kill_all()
    end_like(status, as_init=in_sandbox)


if __name__ == "__main__":
    main(sys.argv[1], parse(sys.argv[2]), sys.argv[3:])
