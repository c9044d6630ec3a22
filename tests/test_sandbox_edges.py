"""The sandbox's edges (issue 28): what tool processes and MCP servers reach, and what not.

- a Unix socket file the sandbox can see answers no connection (a seccomp filter), while
  pipes, socket pairs, asyncio, venvs, pip, git and node still work;
- a server's sandbox has room to reserve address space, and its held memory is bounded;
- a server in a venv whose base Python lives under a home folder starts sandboxed, and
  one whose interpreter is gone says which interpreter;
- a folder a server's args name is the person's grant, ``.git`` included; its cwd is not;
- real servers from PyPI start sandboxed and answer (mcp-server-time, mcp-server-git).
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Agent, Permissions, ScriptedModel, Workspace, say, tool_call
from harness.workspace import sandbox
from harness.workspace.sandbox import Sandbox, contain

needs_bwrap = pytest.mark.skipif(sandbox._sandbox()[0] is None and
                                 os.environ.get("HARNESS_REQUIRE_SANDBOX") != "1",
                                 reason="needs bubblewrap (CI installs it)")
REPO = Path(__file__).resolve().parent.parent
KEY = b"KEY-7f3a9c"
# A small server written with the official SDK: it echoes, and holds memory on request.
EDGE_SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("edge")
held = []


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def hold(mib: int) -> str:
    """Allocate and touch ``mib`` MiB, and keep it."""
    held.append(bytearray(mib << 20))
    return f"holding {mib} MiB"


server.run()
'''


@pytest.fixture(autouse=True)
def _defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HARNESS_SANDBOX", "HARNESS_SANDBOX_NETWORK"):
        monkeypatch.delenv(name, raising=False)


def workspace(folder: Path, sandbox: Sandbox | None = None) -> Workspace:
    folder.mkdir(parents=True, exist_ok=True)
    return Workspace(folder, sandbox=sandbox)


def listen(path: Path) -> socket.socket:
    """A Unix socket at ``path`` that answers every connection with `KEY`."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()

    def answer() -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            with client:
                client.sendall(KEY)

    threading.Thread(target=answer, daemon=True).start()
    return server


def connect(path: Path) -> str:
    """Python code that connects to ``path`` and prints what it reads."""
    return (f"python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
            f"s.connect('{path}'); print(s.recv(64))\"")


@pytest.fixture
def outside_the_workspace() -> Iterator[Path]:
    """A folder neither a home, /tmp nor /run: under the project (build/), where the
    sandbox shows it. Skipped where the project itself is under a hidden folder."""
    if any(sandbox._inside(str(REPO), h) for h in ["/tmp", *sandbox.hidden_folders()]):
        pytest.skip("the project is under a folder the sandbox hides")
    (REPO / "build").mkdir(exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="sock-", dir=REPO / "build"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


# -- finding 9: Unix socket files ---------------------------------------------------------

def refused(ws: Workspace, path: Path) -> str:
    """Connect from the host (it answers), then from the sandbox: its output."""
    with socket.socket(socket.AF_UNIX) as host:
        host.connect(str(path))
        assert host.recv(64) == KEY  # it answers whoever may connect
    return ws.run_shell(connect(path)).output


@needs_bwrap
def test_a_unix_socket_file_in_the_workspace_answers_no_connection(tmp_path: Path) -> None:
    ws = workspace(tmp_path / "ws")
    with listen(ws.root / "k.sock"):
        output = refused(ws, ws.root / "k.sock")
    assert KEY.decode() not in output and "PermissionError" in output, output


@needs_bwrap
def test_a_unix_socket_file_outside_the_workspace_answers_no_connection(
        tmp_path: Path, outside_the_workspace: Path) -> None:
    ws = workspace(tmp_path / "ws")
    with listen(outside_the_workspace / "k.sock"):
        output = refused(ws, outside_the_workspace / "k.sock")
    assert KEY.decode() not in output and "PermissionError" in output, output


@needs_bwrap
def test_a_datagram_socket_pair_cannot_send_to_a_socket_file(tmp_path: Path) -> None:
    """A datagram socket may send to any path, even one of a connected pair: refused."""
    ws = workspace(tmp_path / "ws")
    inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    inbox.bind(str(ws.root / "d.sock"))
    inbox.settimeout(0.5)
    try:
        done = ws.run_shell(
            "python3 -c \"import socket; a, b = socket.socketpair(socket.AF_UNIX, "
            f"socket.SOCK_DGRAM); a.sendto(b'{KEY.decode()}', '{ws.root / 'd.sock'}')\"")
        assert "PermissionError" in done.output
        with pytest.raises(TimeoutError):
            inbox.recv(64)
    finally:
        inbox.close()


@needs_bwrap
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"),
                    reason="io_uring_setup is 425 on x86_64 and aarch64")
def test_io_uring_which_makes_sockets_past_the_filter_is_refused(tmp_path: Path) -> None:
    done = workspace(tmp_path).run_shell(
        "python3 -c \"import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.syscall(425, 8, ctypes.create_string_buffer(120)), ctypes.get_errno())\"")
    assert done.output.split("stdout:\n")[1].split() == ["-1", str(errno.ENOSYS)], done.output


@needs_bwrap
def test_programs_still_work_under_the_socket_filter(tmp_path: Path) -> None:
    """Pipes, socket pairs, asyncio's subprocesses, a venv, pip, git and node."""
    ws = workspace(tmp_path / "ws")
    with zipfile.ZipFile(ws.root / "hello-0.1-py3-none-any.whl", "w") as wheel:
        wheel.writestr("hello/__init__.py", "WHO = 'wheel'\n")
        wheel.writestr("hello-0.1.dist-info/METADATA",
                       "Metadata-Version: 2.1\nName: hello\nVersion: 0.1\n")
        wheel.writestr("hello-0.1.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                       "Root-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr("hello-0.1.dist-info/RECORD", "")
    (ws.root / "check.py").write_text(
        "import asyncio, socket, subprocess, multiprocessing\n"
        "a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())\n"
        "async def main():\n"
        "    p = await asyncio.create_subprocess_exec('echo', 'asyncio',"
        " stdout=asyncio.subprocess.PIPE)\n"
        "    print((await p.communicate())[0].decode().strip())\n"
        "asyncio.run(main())\n"
        "print(subprocess.run(['echo', 'subprocess'], capture_output=True, text=True)"
        ".stdout.strip())\n"
        "if __name__ == '__main__':\n"
        "    with multiprocessing.get_context('fork').Pool(2) as pool:\n"
        "        print('pool', sum(pool.map(abs, [-1, -2])))\n")
    script = (f"{sys.executable} check.py && {sys.executable} -m pip install -q --no-index "
              "--target site hello-0.1-py3-none-any.whl && PYTHONPATH=site "
              f"{sys.executable} -c 'import hello; print(hello.WHO)' && "
              f"{sys.executable} -m venv --without-pip v && v/bin/python -c 'print(\"venv\")'")
    if shutil.which("git"):
        script += (" && git init -q r && git -C r -c user.name=a -c user.email=a@b commit -q "
                   "--allow-empty -m m && git -C r log --format=%s")
    if shutil.which("node"):
        script += " && node -e \"require('child_process').exec('echo node', (e, o) => " \
                  "process.stdout.write(o))\""
    done = ws.run_shell(script)
    assert done.ok, done.output
    words = done.output.split("stdout:\n")[1].split()
    expected = ["pair", "asyncio", "subprocess", "pool", "3", "wheel", "venv"]
    expected += ["m"] if shutil.which("git") else []
    expected += ["node"] if shutil.which("node") else []
    assert words == expected, done.output


@needs_bwrap
def test_with_network_on_unix_sockets_are_the_hosts_to_reach_too(tmp_path: Path) -> None:
    """Network on shares the host's network, its 127.0.0.1 and abstract sockets: the filter
    is off there (documented), so a program may make Unix sockets of its own again."""
    ws = workspace(tmp_path / "ws", Sandbox(network=True))
    with listen(ws.root / "k.sock"):
        assert KEY.decode() in ws.run_shell(connect(ws.root / "k.sock")).output


# -- finding 7: a server's sandbox ----------------------------------------------------------

def test_a_servers_sandbox_reserves_much_but_bounds_what_it_holds() -> None:
    """Node reserves 10 GiB of address space for each WebAssembly memory: a server gets
    room to reserve it, and the watch of what its processes hold bounds it still."""
    from harness.mcp.server import SERVER_SANDBOX

    assert SERVER_SANDBOX.address >= 16 << 30
    assert SERVER_SANDBOX.memory <= 4 << 30
    assert Sandbox().address == Sandbox().memory == 1 << 30  # tool processes: both 1 GiB
    assert "address=" in SERVER_SANDBOX.reaper_limits()


@needs_bwrap
def test_a_sandboxed_server_holding_more_than_its_memory_is_stopped(tmp_path: Path) -> None:
    from harness.mcp import MCPServer
    from harness.mcp.server import SERVER_SANDBOX

    (tmp_path / "edge.py").write_text(EDGE_SERVER)
    box = dataclasses.replace(SERVER_SANDBOX, memory=200 << 20)
    with MCPServer("edge", sys.executable, [str(tmp_path / "edge.py")], cwd=tmp_path,
                   sandbox=box) as server:
        assert "holding" in str(server.call("hold", {"mib": 50}))
        stopped = server.call("hold", {"mib": 300})
    assert not stopped.ok and "Sandbox(memory=...)" in stopped.output, stopped.output


@needs_bwrap
@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_node_can_fetch_in_a_servers_sandbox(tmp_path: Path) -> None:
    """Node's fetch instantiates WebAssembly (its HTTP parser): under 1 GiB of address
    space it dies with "Cannot allocate Wasm memory"; a server's sandbox lets it run."""
    from harness.mcp.server import SERVER_SANDBOX

    argv, _ = contain(["node", "-e", "fetch('http://127.0.0.1:8/').catch("
                       "e => console.log('refused', e.cause && e.cause.code))"],
                      tmp_path, SERVER_SANDBOX)
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "Wasm" not in done.stderr, done.stderr
    assert "refused ECONNREFUSED" in done.stdout  # it reached the (sandbox's own) loopback


# -- finding 12: a venv whose base Python is under a home folder -------------------------------

def python_under_home(home: Path) -> Path:
    """A Python installation under ``home``, as pyenv keeps one: a copy of this Python's
    own program in <home>/.pyenv/versions/x/bin, its standard library linked in."""
    base = Path(sys.base_prefix)
    prefix = home / ".pyenv" / "versions" / "x"
    (prefix / "bin").mkdir(parents=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    real = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    shutil.copy2(real, prefix / "bin" / version)
    for lib in ("lib", "lib64"):
        if (base / lib / version).is_dir():
            (prefix / lib).symlink_to(base / lib)
    return prefix / "bin" / version


def venv_with_server(tmp_path: Path, python: Path, *, copies: bool = False) -> Path:
    """A venv made by ``python``, the harness's packages on its path (a .pth file), and
    a console script in its bin/ whose ``#!`` names the venv's python: the server."""
    venv = tmp_path / "venv"
    subprocess.run([str(python), "-m", "venv", "--without-pip",
                    *(["--copies"] if copies else []), str(venv)], check=True, timeout=60)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = venv / "lib" / version / "site-packages"
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "harness_env.pth").write_text("\n".join(sorted(paths)) + "\n")
    script = venv / "bin" / "edge-server"
    script.write_text(f"#!{venv / 'bin' / 'python'}\n{EDGE_SERVER}")
    script.chmod(0o755)
    return script


@needs_bwrap
@pytest.mark.parametrize("copies", [False, True], ids=["linked", "copied"])
def test_a_venv_whose_python_lives_under_a_home_folder_starts_sandboxed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copies: bool) -> None:
    from harness.mcp import MCPServer

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))  # hidden in the sandbox, as a home is
    script = venv_with_server(tmp_path, python_under_home(home), copies=copies)
    with MCPServer("edge", str(script), cwd=tmp_path) as server:
        assert "hello" in str(server.call("echo", {"text": "hello"}))


def test_server_paths_follow_a_scripts_interpreter_and_a_venvs_base(tmp_path: Path) -> None:
    from harness.mcp.server import server_paths

    pyenv = tmp_path / "home" / ".pyenv" / "versions" / "x"
    (pyenv / "bin").mkdir(parents=True)
    (pyenv / "bin" / "python3").write_text("")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {pyenv / 'bin'}\nversion = 3\n")
    (venv / "bin" / "python").write_text("")  # a copy, not a link: pyvenv.cfg says where
    node = tmp_path / "nvm" / "versions" / "node" / "v20"
    (node / "bin").mkdir(parents=True)
    (node / "bin" / "node").write_text("")
    (node / "bin" / "node").chmod(0o755)
    long_launcher = tmp_path / "tool" / "bin" / "srv"
    long_launcher.parent.mkdir(parents=True)
    long_launcher.write_text(f"#!/bin/sh\n'''exec' \"{venv / 'bin' / 'python'}\" \"$0\" \"$@\"\n"
                             "' '''\nimport sys\n")
    by_env = tmp_path / "tool" / "bin" / "js-srv"
    by_env.write_text("#!/usr/bin/env node\nconsole.log(1)\n")
    for script, needed in ((long_launcher, [venv, pyenv]), (by_env, [node])):
        path = f"{node / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("PATH", path)
            shown, _ = server_paths([str(script)], tmp_path)
        for folder in needed:
            assert str(folder) in shown, (script.name, shown)
    shown, _ = server_paths([sys.executable, str(venv / "bin" / "python")], tmp_path)
    assert str(pyenv) in shown  # a file it names in a venv: that venv's base too


def test_a_missing_interpreter_is_named_not_the_script(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The venv's python is a link to a Python that is gone: the error says so."""
    from harness.mcp import MCPServer, MCPServerError

    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    script = venv_with_server(tmp_path, python_under_home(home))
    shutil.rmtree(home / ".pyenv")
    with pytest.raises(MCPServerError) as raised:
        MCPServer("edge", str(script), cwd=tmp_path).start()
    message = str(raised.value)
    assert "interpreter" in message and str(script.parent / "python") in message, message


# -- finding 13: a folder the person names is the server's to change ----------------------------

@needs_bwrap
def test_a_granted_folder_is_writable_whole_but_its_env_files_still_read_empty(
        tmp_path: Path) -> None:
    ws, repo = tmp_path / "ws", tmp_path / "ws" / "repo"
    for folder in (ws / ".git", repo / ".git"):
        folder.mkdir(parents=True)
    (repo / ".env").write_text("SECRET=1")
    script = ("printf x > repo/.git/granted; printf x > .git/cwd_only; cat repo/.env; "
              "echo read")
    argv, _ = contain(["bash", "-c", script], ws, writable=[str(repo)])
    done = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=30)
    assert (repo / ".git" / "granted").exists(), done.stderr
    assert not (ws / ".git" / "cwd_only").exists()  # the workspace's own: read-only
    assert done.stdout.strip() == "read"  # the .env read as empty


def test_a_folder_named_as_an_option_value_is_granted(tmp_path: Path) -> None:
    from harness.mcp.server import server_paths

    _, writable = server_paths(["srv", f"--root={tmp_path}", "--verbose"], tmp_path)
    assert writable == [str(tmp_path)]


def git_repo(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for command in (["init", "-q"], ["-c", "user.name=a", "-c", "user.email=a@b", "commit",
                                     "-q", "--allow-empty", "-m", "first"]):
        subprocess.run(["git", *command], cwd=folder, check=True, timeout=30)
    return folder


def branches(repo: Path) -> list[str]:
    listed = subprocess.run(["git", "branch", "--list", "--format=%(refname:short)"],
                            cwd=repo, capture_output=True, text=True, check=True).stdout
    return listed.split()


def pypi_server(name: str) -> str:
    pytest.importorskip(name.replace("-", "_"), reason=f"pip install {name}")
    program = Path(sys.executable).with_name(name)
    return str(program) if program.exists() else (shutil.which(name) or name)


@needs_bwrap
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_git_server_may_write_the_repository_its_config_names(tmp_path: Path) -> None:
    from harness.mcp import load_mcp_config

    repo = git_repo(tmp_path / "repo")
    config = repo / ".mcp.json"  # in the project: the server's cwd is the repository too
    config.write_text(json.dumps({"mcpServers": {"git": {
        "command": pypi_server("mcp-server-git"), "args": ["--repository", "."]}}}))
    model = ScriptedModel([tool_call("mcp__git__git_create_branch",
                                     {"repo_path": str(repo), "branch_name": "feature-x"}),
                           say("done")])
    with Agent(model, mcp_servers=load_mcp_config(config),
               permissions=Permissions({"mcp__git__git_create_branch": "allow"})) as agent:
        result = agent.run("Make the branch feature-x.")
    outputs = [e.output for e in result.events if e.type == "tool_result"]
    assert "feature-x" in branches(repo), outputs


@needs_bwrap
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_servers_cwd_alone_keeps_its_git_read_only(tmp_path: Path) -> None:
    from harness.mcp import MCPServer

    from harness import Agent, Permissions, ScriptedModel, say, tool_call

    repo = git_repo(tmp_path / "repo")
    with MCPServer("git", pypi_server("mcp-server-git"), cwd=repo) as server:
        result = Agent(ScriptedModel([
            tool_call("mcp__git__git_create_branch", repo_path=str(repo),
                      branch_name="feature-y"), say("tried")]), mcp_servers=[server],
            permissions=Permissions({"mcp__git__git_create_branch": "allow"})).run("branch")
    assert "feature-y" not in branches(repo)
    [answer] = [e for e in result.events if e.type == "tool_result"]
    # the result says that the sandbox refused the write, and how to allow it
    assert not answer.data["ok"]
    assert "sandbox refused a write" in answer.data["output"]
    assert "--repository" in answer.data["output"]


@needs_bwrap
def test_mcp_server_time_starts_sandboxed_and_answers(tmp_path: Path) -> None:
    from harness.mcp import load_mcp_config

    config = tmp_path / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": {
        "command": pypi_server("mcp-server-time"), "args": ["--local-timezone", "UTC"]}}}))
    [server] = load_mcp_config(config)
    with server:
        answer = server.call("get_current_time", {"timezone": "Europe/Paris"})
    assert '"timezone": "Europe/Paris"' in str(answer), answer
