"""Skills and MCP servers use nothing but their run's door (issue 27, point 3).

A skill is read only from regular files inside its folder, with the checks ``read_file``
makes (no link followed, never a FIFO or a device, a size cap), and `load_skill` reads
within the run's clock; what it may not read is a result the model reads. An MCP server
starts within the run's clock and speaks through ``door.emit``.

Every test is bounded twice: by the run's ``max_seconds`` where there is a run, and by
`bounded`, which gives up on a call that does not return (a regression fails, it does
not hang the suite). A FIFO a reader may still block on is opened for writing at the
end, which lets that reader go.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from harness import Agent, ScriptedModel, Workspace, say, tool_call
from harness.skills import Skills

SECRET = "OPENAI_API_KEY=sk-do-not-leak-4242"
FIFOS = hasattr(os, "mkfifo")
DEV_ZERO = Path("/dev/zero").exists()


def skill(folder: Path, name: str, body: str = "# Steps\nDo the thing.\n") -> Path:
    (folder / name).mkdir(parents=True, exist_ok=True)
    path = folder / name / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: Does {name}. Use it when asked.\n---\n"
                    f"{body}", encoding="utf-8")
    return path


def bounded(fn, seconds: float = 10.0):
    """``fn()``, run in a daemon thread: fail if it has not returned within ``seconds``."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def gone(pid: int, within: float = 2.0) -> bool:
    """Wait up to ``within`` seconds for process ``pid`` to be gone (or a zombie)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            stat = Path(f"/proc/{pid}/stat")  # Linux: a zombie is gone too
            if Path("/proc/self").exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (OSError, IndexError):  # gone, even while /proc was read
            return True
        time.sleep(0.02)
    return False


def release(fifo: Path) -> None:
    """Let go a reader blocked on ``fifo`` (a regression): open its other end."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # no reader waiting: nothing to let go
        pass


def load_once(folder: Path, name: str, between=lambda: None, **limits):
    """An agent with the skills in ``folder``; ``between()`` runs once it is made (the
    index read), then a run that calls load_skill(name). The result, its load_skill
    output and how long the run took."""
    agent = Agent(ScriptedModel([tool_call("load_skill", {"name": name}), say("done")]),
                  skills=folder, max_seconds=limits.get("max_seconds", 5))
    between()
    started = time.monotonic()
    result = bounded(lambda: agent.run("x"))
    took = time.monotonic() - started
    outputs = [e for e in result.events if e.type == "tool_result"]
    assert len(outputs) == 1
    return result, outputs[0], took


def everything(result) -> str:
    return "\n".join([*(str(m.get("content")) for m in result.messages),
                      *(str(getattr(e, "output", "")) for e in result.events)])


# -- links ----------------------------------------------------------------------------------

def test_a_skill_md_linked_outside_its_folder_is_not_read_when_loaded(tmp_path):
    (tmp_path / ".env").write_text(SECRET + "\n", encoding="utf-8")
    path = skill(tmp_path / "skills", "refund-note")

    def link() -> None:  # the case: ln -sf ../../.env skills/refund-note/SKILL.md
        path.unlink()
        path.symlink_to("../../.env")

    result, out, _ = load_once(tmp_path / "skills", "refund-note", link)
    assert result.outcome == "completed"
    assert out.ok is False and "link" in out.output
    assert "sk-do-not-leak" not in everything(result)


def test_a_skill_md_linked_outside_is_left_out_of_the_index(tmp_path):
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\nname: leak\ndescription: LEAKED-DESCRIPTION\n---\n" + SECRET,
                       encoding="utf-8")
    (tmp_path / "skills/leak").mkdir(parents=True)
    (tmp_path / "skills/leak/SKILL.md").symlink_to(outside)
    skill(tmp_path / "skills", "good")
    skills = bounded(lambda: Skills(tmp_path / "skills"))
    assert list(skills.skills) == ["good"]
    assert "LEAKED" not in skills.index()
    assert len(skills.problems) == 1 and "leak/SKILL.md" in skills.problems[0]
    assert "link" in skills.problems[0]


def test_a_linked_skill_folder_is_not_followed(tmp_path):
    skill(tmp_path / "outside", "evil", body=SECRET)
    (tmp_path / "skills").mkdir()
    (tmp_path / "skills/evil").symlink_to(tmp_path / "outside/evil", target_is_directory=True)
    skill(tmp_path / "skills", "good")
    skills = bounded(lambda: Skills(tmp_path / "skills"))
    assert list(skills.skills) == ["good"]
    assert len(skills.problems) == 1 and skills.problems[0].startswith("evil: a link")


def test_a_skill_folder_swapped_for_a_link_after_the_index_is_refused(tmp_path):
    skill(tmp_path / "outside", "notes", body=SECRET)
    skill(tmp_path / "skills", "notes")

    def swap() -> None:
        (tmp_path / "skills/notes/SKILL.md").unlink()
        (tmp_path / "skills/notes").rmdir()
        (tmp_path / "skills/notes").symlink_to(tmp_path / "outside/notes")

    result, out, _ = load_once(tmp_path / "skills", "notes", swap)
    assert result.outcome == "completed"
    assert out.ok is False and "goes through a link ('notes')" in out.output
    assert "sk-do-not-leak" not in everything(result)


def test_files_beside_the_body_are_regular_files_inside_its_folder(tmp_path):
    (tmp_path / ".env").write_text(SECRET, encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside/private.md").write_text("private", encoding="utf-8")
    folder = skill(tmp_path / "skills", "notes").parent
    (folder / "template.md").write_text("t", encoding="utf-8")
    (folder / "examples").mkdir()
    (folder / "examples/one.md").write_text("1", encoding="utf-8")
    (folder / "secret.md").symlink_to("../../.env")  # a file link
    (folder / "refs").symlink_to(tmp_path / "outside", target_is_directory=True)  # a folder link
    if FIFOS:
        os.mkfifo(folder / "pipe")
    try:
        text = bounded(lambda: Skills(tmp_path / "skills").load("notes"))
    finally:
        release(folder / "pipe")
    listed = text.split("Files of this skill", 1)[1]
    assert "skills/notes/template.md" in listed and "skills/notes/examples/one.md" in listed
    for absent in ("secret.md", "refs", "private.md", "pipe", "SKILL.md"):
        assert absent not in listed, absent


# -- FIFOs, devices, size --------------------------------------------------------------------

@pytest.mark.skipif(not FIFOS, reason="no FIFOs here")
def test_a_fifo_at_skill_md_does_not_hold_the_making_of_the_agent(tmp_path):
    skill(tmp_path / "skills", "good")
    (tmp_path / "skills/stuck").mkdir()
    fifo = tmp_path / "skills/stuck/SKILL.md"
    os.mkfifo(fifo)  # left by an earlier run, say
    try:
        agent = bounded(lambda: Agent(ScriptedModel([say("ok")]), skills=tmp_path / "skills"))
        problems = bounded(lambda: Skills(tmp_path / "skills").problems)
    finally:
        release(fifo)
    assert "good" in bounded(lambda: agent.run("x")).messages[0]["content"]
    assert len(problems) == 1 and "stuck/SKILL.md" in problems[0]
    assert "not a regular file" in problems[0]


@pytest.mark.skipif(not FIFOS, reason="no FIFOs here")
def test_a_fifo_that_appears_before_load_skill_does_not_hold_the_run(tmp_path):
    path = skill(tmp_path / "skills", "notes")

    def fifo() -> None:
        path.unlink()
        os.mkfifo(path)

    try:
        result, out, took = load_once(tmp_path / "skills", "notes", fifo, max_seconds=3)
    finally:
        release(path)
    assert result.outcome == "completed" and took < 3
    assert out.ok is False and "not a regular file" in out.output


@pytest.mark.skipif(not DEV_ZERO, reason="no /dev/zero here")
def test_a_link_to_dev_zero_is_not_read(tmp_path):
    (tmp_path / "skills/zero").mkdir(parents=True)
    (tmp_path / "skills/zero/SKILL.md").symlink_to("/dev/zero")
    path = skill(tmp_path / "skills", "notes")
    skills = bounded(lambda: Skills(tmp_path / "skills"))
    assert list(skills.skills) == ["notes"]
    assert "zero/SKILL.md" in skills.problems[0] and "link" in skills.problems[0]

    def zero() -> None:
        path.unlink()
        path.symlink_to("/dev/zero")

    result, out, _ = load_once(tmp_path / "skills", "notes", zero)
    assert result.outcome == "completed"
    assert out.ok is False and "link" in out.output


def test_a_huge_skill_md_is_not_read(tmp_path):
    huge = "---\nname: huge\ndescription: Big. Use it never.\n---\n" + "x" * 2_000_000
    (tmp_path / "skills/huge").mkdir(parents=True)
    (tmp_path / "skills/huge/SKILL.md").write_text(huge, encoding="utf-8")
    path = skill(tmp_path / "skills", "notes")
    skills = bounded(lambda: Skills(tmp_path / "skills"))
    assert list(skills.skills) == ["notes"]
    assert "huge/SKILL.md" in skills.problems[0] and "the limit is 1,000,000" in skills.problems[0]

    def grow() -> None:
        path.write_text(path.read_text() + "y" * 2_000_000, encoding="utf-8")

    result, out, _ = load_once(tmp_path / "skills", "notes", grow)
    assert result.outcome == "completed"
    assert out.ok is False and "the limit is 1,000,000" in out.output


# -- the run's clock --------------------------------------------------------------------------

def test_load_skill_reads_through_the_door_within_the_runs_clock(tmp_path, monkeypatch):
    from harness.workspace import files

    skill(tmp_path / "skills", "notes")
    real = files.read_text

    def slow(*args):  # a read that takes its time: a slow disk, a network share
        time.sleep(5)
        return real(*args)

    def slow_files() -> None:  # once the index is read
        monkeypatch.setattr(files, "read_text", slow)

    result, _, took = load_once(tmp_path / "skills", "notes", slow_files, max_seconds=1)
    assert result.outcome == "time_limit"
    assert took < 1 + 1, took


# -- MCP: a server that hangs at its start ------------------------------------------------------

SLOW_START = '''\
import sys
import time

time.sleep(float(sys.argv[1]))  # before the handshake: the client's initialize waits
from mcp.server.mcpserver import MCPServer

server = MCPServer("slow")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


server.run()
'''


@pytest.fixture
def slow_server(tmp_path):
    pytest.importorskip("mcp")
    from harness.mcp import MCPServer

    script = tmp_path / "slow_server.py"
    script.write_text(SLOW_START, encoding="utf-8")
    server = MCPServer("slow", sys.executable, [str(script), "30"], cwd=tmp_path,
                       connect_timeout=20)
    yield server
    server.close()


@pytest.mark.parametrize("how", ["max_seconds", "cancel"])
def test_a_server_that_hangs_at_its_start_cannot_hold_the_run(slow_server, how):
    cancel = threading.Event()
    limits = {"max_seconds": 1.5} if how == "max_seconds" else {}
    agent = Agent(ScriptedModel([say("never")]), mcp_servers=[slow_server], **limits)
    if how == "cancel":
        threading.Timer(1.5, cancel.set).start()
    started = time.monotonic()
    result = bounded(lambda: agent.run("x", cancel=cancel if how == "cancel" else None))
    took = time.monotonic() - started
    outcome = "time_limit" if how == "max_seconds" else "cancelled"
    assert result.outcome == outcome
    assert took < 1.5 + 1, took  # at most a second past the deadline or the cancel
    event = next(e for e in result.events if e.type == "mcp_server")
    assert event.status == "failed" and f"the run stopped ({outcome})" in event.error
    assert result.events[0].type == "run_start"  # the failure is told after it
    assert not any(e.type == "model_request" for e in result.events)
    pid = slow_server._process.pid
    assert gone(pid), "the server's process outlived the run"
    bounded(agent.close, 5)
    assert not slow_server.running


def test_servers_start_and_speak_through_the_door(tmp_path):
    pytest.importorskip("mcp")
    from harness.mcp import MCPServer

    class Door:  # what a run lends its mechanisms; here, a record of what was used
        depth = 0

        def __init__(self):
            self.waited, self.said = 0, []

        def within_clock(self, fn):
            self.waited += 1
            return fn()

        def emit(self, type_, **data):
            self.said.append((type_, data["server"], data["status"]))

    ws = Workspace.sample(tmp_path / "ws")
    shop = MCPServer("shop", sys.executable, ["tools/shop_server.py"], cwd=ws.root)
    with Agent(ScriptedModel([say("x")]), mcp_servers=[shop]) as agent:
        door = Door()
        mechanism = bounded(lambda: agent.stack.find("mcp").make(door), 30)
        mechanism.door = door  # as the run does
        assert door.waited == 1 and shop.running
        assert "mcp__shop__get_order" in {t.name for t in mechanism.tools()}
        mechanism.before_request([])
        assert door.said == [("mcp_server", "shop", "started")]
    assert not shop.running  # Agent.close() stops its servers


def test_agent_close_stops_the_servers_a_run_started(tmp_path):
    pytest.importorskip("mcp")
    from harness.mcp import MCPServer

    ws = Workspace.sample(tmp_path / "ws")
    shop = MCPServer("shop", sys.executable, ["tools/shop_server.py"], cwd=ws.root)
    agent = Agent(ScriptedModel([say("x")]), mcp_servers=[shop], max_seconds=30)
    result = bounded(lambda: agent.run("x"), 40)
    assert result.outcome == "completed" and shop.running
    pid = shop._process.pid
    bounded(agent.close, 10)
    assert not shop.running and gone(pid)
