"""MCP servers that answer too much, leave processes behind, outlive their agent, offer
more than tools, or die with a stack trace (harness.mcp: server.py, transport.py, http.py).

The servers here are written in the test: a raw HTTP server on 127.0.0.1 that answers
64 MB, and small stdio servers on the official SDK (tests/fixtures/mcp for the others).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from helpers import all_dead, pid_alive

from harness import Agent, Permissions, ScriptedModel, say, tool_call
from harness.mcp import MCPServer, MCPServerError

ROOT = Path(__file__).resolve().parents[1]
BIG = 64 << 20  # bytes in the answer that is too long: 64 MB
LIMIT_TEXT = "longer than 4,194,304 bytes"


def outputs(result, name):
    return [e.output for e in result.events if e.type == "tool_result" and e.tool_name == name]


# -- an HTTP server's answer is read at most 4 MiB a message ------------------------------

class RawMCP(BaseHTTPRequestHandler):
    """Just enough streamable HTTP: two tools, ``big`` answering 64 MB the way the
    server's ``mode`` says (one JSON body, one event, or gzip the client did not ask
    for), ``small`` answering a line."""

    protocol_version = "HTTP/1.1"
    mode = "json"

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # no stream of its own
        self._send(405, b"", "text/plain")

    def do_DELETE(self) -> None:
        self._send(200, b"", "text/plain")

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if "id" not in message:  # a notification
            return self._send(202, b"", "text/plain")
        method, params = message["method"], message.get("params", {})
        if method == "initialize":
            result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "raw", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}}
                                for n in ("big", "small")]}
        elif method == "tools/call" and params["name"] == "big":
            return self._big(message["id"])
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "small ok"}]}
        else:
            return self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": "not here"}}).encode(), "application/json")
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                    "result": result}).encode(), "application/json")

    def _send(self, status: int, body: bytes, kind: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _big(self, request_id: int) -> None:
        answer = json.dumps({"jsonrpc": "2.0", "id": request_id,
                             "result": {"content": [{"type": "text", "text": "@"}]}}).encode()
        head, tail = answer.split(b"@")
        if self.mode == "events":
            head, tail = b"event: message\ndata: " + head, tail + b"\n\n"
        parts = [head, *[b"x" * (1 << 20)] * (BIG >> 20), tail]
        kind = "text/event-stream" if self.mode == "events" else "application/json"
        extra = {}
        if self.mode == "gzip":  # packed though the client asked for no packing
            pack = zlib.compressobj(1, zlib.DEFLATED, 31)
            parts = [b"".join(pack.compress(p) for p in parts) + pack.flush()]
            extra["Content-Encoding"] = "gzip"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(sum(map(len, parts))))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        try:
            for part in parts:
                self.wfile.write(part)
        except OSError:  # the client stopped reading: as it should
            pass


@pytest.fixture
def raw_server():
    servers = []

    def start(mode: str) -> str:
        handler = type("Handler", (RawMCP,), {"mode": mode})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/mcp"
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["json", "events", "gzip"])
def test_a_64_mb_http_answer_is_cut_at_the_message_limit_and_memory_stays_bounded(
        raw_server, mode):
    server = MCPServer("raw", url=raw_server(mode))
    model = ScriptedModel([tool_call("mcp__raw__big", {}), tool_call("mcp__raw__small", {}),
                           say("went on")])
    agent = Agent(model, mcp_servers=[server], permissions=Permissions(
        {"mcp__raw__big": "allow", "mcp__raw__small": "allow"}))
    with agent:
        server.start()
        tracemalloc.start()
        try:
            started = time.monotonic()
            result = agent.run("x")
            took = time.monotonic() - started
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 24 << 20, f"{peak >> 20} MiB held for a {BIG >> 20} MB answer"
    assert LIMIT_TEXT in outputs(result, "mcp__raw__big")[0]
    assert outputs(result, "mcp__raw__small") == ["small ok"]  # the run and the server go on
    assert result.outcome == "completed" and result.final == "went on" and took < 5


SSE_SERVER = '''
import sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("legacy")


@server.tool()
def big(megabytes: int) -> str:
    return "x" * (megabytes << 20)


@server.tool()
def echo(text: str) -> str:
    return text


server.run("sse", host="127.0.0.1", port=int(sys.argv[1]))
'''


def _serve(tmp_path: Path, source: str, *args: str) -> subprocess.Popen:
    import socket

    script = tmp_path / "http_server.py"
    script.write_text(source)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(script), str(port), *args],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    process.port = port
    return process


def test_an_sse_server_s_long_answer_ends_the_call_not_the_run(tmp_path):
    process = _serve(tmp_path, SSE_SERVER)
    try:
        server = MCPServer("legacy", url=f"http://127.0.0.1:{process.port}/sse",
                           transport="sse")
        perms = Permissions({"mcp__legacy__big": "allow", "mcp__legacy__echo": "allow"})
        with Agent(ScriptedModel([tool_call("mcp__legacy__big", {"megabytes": 8}),
                                  say("went on")]),
                   mcp_servers=[server], permissions=perms) as agent:
            first = agent.run("x")
            assert first.outcome == "completed" and first.final == "went on"
            said = outputs(first, "mcp__legacy__big")[0]
            assert said.startswith("Error") and "limit" in said  # why, not "Connection closed"
            agent.model = ScriptedModel([tool_call("mcp__legacy__echo", {"text": "back"}),
                                         say("ok")])
            again = agent.run("x")  # the server is read again for the next run
        assert outputs(again, "mcp__legacy__echo") == ["back"]
    finally:
        process.kill()
        process.wait()


# -- an unsandboxed server takes everything it started with it ---------------------------

SPAWNER = '''
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer

child = subprocess.Popen(["sleep", "300"], start_new_session=True,  # as setsid does
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
with open(sys.argv[1], "a") as out:
    out.write(f"{child.pid}\\n")
server = MCPServer("spawner")


@server.tool()
def ping() -> str:
    return "pong"


@server.tool()
def hang() -> str:
    time.sleep(3600)
    return "woke"


server.run()
'''


@pytest.fixture
def spawner(tmp_path):
    """A server (unconfined) that starts a grandchild in a session of its own; the
    grandchild's pid, read once the server has started."""
    script = tmp_path / "spawner.py"
    script.write_text(SPAWNER)
    pid_file = tmp_path / "child.pid"
    made = []

    def make(**options) -> MCPServer:
        server = MCPServer("spawner", sys.executable, [str(script), str(pid_file)],
                           cwd=tmp_path, sandbox=False, **options)
        made.append(server)
        return server

    def child() -> int:
        deadline = time.monotonic() + 5
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return int(pid_file.read_text().split()[-1])

    make.child = child
    yield make
    for server in made:
        server.close()
    for pid in map(int, pid_file.read_text().split() if pid_file.exists() else []):
        if pid_alive(pid):  # left behind (by a harness without the reaper): not by this suite
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["agent.close", "server.close"])
def test_an_unsandboxed_server_s_setsid_child_ends_when_it_is_closed(spawner, how):
    server = spawner()
    agent = Agent(ScriptedModel([say("hi")]), mcp_servers=[server])
    agent.run("x")
    child, pid = spawner.child(), server._process.pid
    assert pid_alive(child)
    agent.close() if how == "agent.close" else server.close()
    assert all_dead([pid, child])


def test_an_unsandboxed_server_stopped_mid_call_takes_its_setsid_child_with_it(spawner):
    server = spawner(timeout=0.5)
    model = ScriptedModel([tool_call("mcp__spawner__hang", {}), say("went on")])
    with Agent(model, mcp_servers=[server],
               permissions=Permissions({"mcp__spawner__hang": "allow"})) as agent:
        result = agent.run("x")
        assert "no answer within 0.5 s" in outputs(result, "mcp__spawner__hang")[0]
        assert all_dead([spawner.child()])  # before close: the stop alone did it


def test_servers_stop_at_exit_with_everything_they_started(tmp_path):
    script = tmp_path / "spawner.py"
    script.write_text(SPAWNER)
    program = tmp_path / "program.py"
    program.write_text(f'''
import sys
from harness import Agent, ScriptedModel, say
from harness.mcp import MCPServer

server = MCPServer("s", sys.executable, [{str(script)!r}, {str(tmp_path / "child.pid")!r}],
                   sandbox=False)
agent = Agent(ScriptedModel([say("hi")]), mcp_servers=[server])
agent.run("x")
print(server._process.pid)
''')  # no close(): Python's exit stops the server
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    child = int((tmp_path / "child.pid").read_text().split()[-1])
    try:
        assert all_dead([int(done.stdout.split()[-1]), child])
    finally:
        if pid_alive(child):
            os.kill(child, signal.SIGKILL)


# -- an agent dropped without close() stops its servers -----------------------------------

def test_a_dropped_agent_s_servers_stop_when_it_is_collected(spawner):
    server = spawner()
    agent = Agent(ScriptedModel([say("hi")]), mcp_servers=[server])
    agent.run("x")
    pid, child = server._process.pid, spawner.child()
    del agent
    gc.collect()
    assert all_dead([pid, child])
    deadline = time.monotonic() + 2
    while server.running and time.monotonic() < deadline:  # its thread ends on its own
        time.sleep(0.02)
    assert not server.running


def test_a_server_two_agents_use_stops_when_the_last_is_collected(spawner):
    server = spawner()
    first = Agent(ScriptedModel([say("hi")]), mcp_servers=[server])
    second = Agent(ScriptedModel([say("hi"), say("again")]), mcp_servers=[server])
    first.run("x")
    pid = server._process.pid
    del first
    gc.collect()
    assert server.running and pid_alive(pid)  # the other agent still uses it
    assert second.run("x").final == "hi"
    del second
    gc.collect()
    assert all_dead([pid])


def test_a_closed_agent_that_is_collected_leaves_a_restarted_server_alone(spawner):
    server = spawner()
    agent = Agent(ScriptedModel([say("hi")]), mcp_servers=[server])
    agent.run("x")
    agent.close()
    with server:  # the person starts it again, for themselves
        del agent
        gc.collect()
        assert server.running


# -- resources and prompts are the person's ------------------------------------------------

DOCS = '''
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("docs")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


@server.resource("docs://readme", mime_type="text/plain")
def readme() -> str:
    return "Read me first."


@server.resource("docs://long", mime_type="text/plain")
def long() -> str:
    return "y" * 200_000


@server.resource("docs://slow", mime_type="text/plain")
async def slow() -> str:
    await anyio.sleep(60)
    return "late"


@server.prompt()
def review(code: str) -> str:
    """Ask for a review of some code."""
    return f"Please review this code:\\n{code}"


@server.prompt()
def hello() -> list:
    """Say hello."""
    return [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi!"}]


server.run()
'''


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("docs")
    (folder / "docs_server.py").write_text(DOCS)
    with MCPServer("docs", sys.executable, ["docs_server.py"], cwd=folder, timeout=1) as server:
        yield server


def test_resources_are_listed_and_read_for_the_person(docs):
    assert {str(r.uri) for r in docs.list_resources()} == {
        "docs://readme", "docs://long", "docs://slow"}
    assert docs.read_resource("docs://readme") == "Read me first."
    cut = docs.read_resource("docs://long", max_chars=1000)
    assert cut.startswith("y" * 1000) and "[cut: docs://long has 200,000 characters" in cut
    assert len(docs.read_resource("docs://long")) < 200_000  # capped by default too


def test_prompts_are_listed_and_filled_for_the_person(docs):
    assert sorted(p.name for p in docs.list_prompts()) == ["hello", "review"]
    assert docs.get_prompt("review", {"code": "x = 1"}) == [
        {"role": "user", "content": "Please review this code:\nx = 1"}]
    assert [m["role"] for m in docs.get_prompt("hello")] == ["user", "assistant"]


def test_what_a_server_cannot_answer_is_an_mcp_server_error_that_says_why(docs):
    with pytest.raises(MCPServerError, match="docs://nothing"):
        docs.read_resource("docs://nothing")
    with pytest.raises(MCPServerError, match="review"):
        docs.get_prompt("review")  # its argument is missing
    started = time.monotonic()
    with pytest.raises(MCPServerError, match="no answer within 1 s"):
        docs.read_resource("docs://slow")
    assert time.monotonic() - started < 3
    assert docs.read_resource("docs://readme") == "Read me first."  # it still answers


def test_a_server_without_resources_says_so():
    legacy = str(ROOT / "tests" / "fixtures" / "mcp" / "legacy_server.py")
    with MCPServer("legacy", sys.executable, [legacy]) as server:
        with pytest.raises(MCPServerError, match="offers no resources"):
            server.list_resources()
        with pytest.raises(MCPServerError, match="offers no prompts"):
            server.get_prompt("anything")
        assert server.offers == {"resources": None, "prompts": None}


def test_the_model_gets_tools_only_and_the_started_event_counts_the_rest(tmp_path):
    (tmp_path / "docs_server.py").write_text(DOCS)
    server = MCPServer("docs", sys.executable, ["docs_server.py"], cwd=tmp_path)
    with Agent(ScriptedModel([say("hi")]), mcp_servers=[server]) as agent:
        result = agent.run("x")
    assert [t["function"]["name"] for t in agent.model.requests[0]["tools"]] == [
        "mcp__docs__ping"]
    event = next(e for e in result.events if e.type == "mcp_server")
    assert (event.status, event.resources, event.prompts) == ("started", 3, 2)


# -- a server that fails to start says why, not where --------------------------------------

NODE_CRASH = '''
import sys

print("Starting dbhub with DSN sqlite:///no/such/dir/db.sqlite", file=sys.stderr)
print("/app/node_modules/@bytebase/dbhub/dist/index.js:2211", file=sys.stderr)
print("      throw new Error(`SQLite directory does not exist: ${dir}`);", file=sys.stderr)
print("            ^", file=sys.stderr)
print("", file=sys.stderr)
print("Error: SQLite directory does not exist: /no/such/dir", file=sys.stderr)
for i in range(15):
    print(f"    at SQLiteConnector.connect{i} (file:///home/person/.npm/_npx/4f3a9c/"
          f"node_modules/@bytebase/dbhub/dist/index.js:{2200 + i}:15)", file=sys.stderr)
print("    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
      file=sys.stderr)
print("", file=sys.stderr)
print("Node.js v20.11.1", file=sys.stderr)
sys.exit(1)
'''

PYTHON_CRASH = '''
import sys


def connect(depth):
    if depth:
        return connect(depth - 1)
    raise FileNotFoundError("database folder /no/such/dir does not exist")


print("2026-01-01 INFO starting the server", file=sys.stderr)
connect(20)
'''


@pytest.mark.parametrize("source, reason", [
    (NODE_CRASH, "Error: SQLite directory does not exist: /no/such/dir"),
    (PYTHON_CRASH, "FileNotFoundError: database folder /no/such/dir does not exist")])
def test_a_server_that_dies_at_start_shows_its_cause_above_the_stack_frames(
        tmp_path, source, reason):
    (tmp_path / "crash.py").write_text(source)
    server = MCPServer("db", sys.executable, ["crash.py"], cwd=tmp_path, sandbox=False)
    with pytest.raises(MCPServerError) as raised:
        server.start()
    message = str(raised.value)
    assert reason in message
    assert "    at " not in message and "node:internal" not in message
    assert 'File "' not in message and len(message) < 1500
    result = Agent(ScriptedModel([say("without it")]), mcp_servers=[server]).run("x")
    event = next(e for e in result.events if e.type == "mcp_server")
    assert event.status == "failed" and reason in event.error
    assert result.outcome == "completed"
