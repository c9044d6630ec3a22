"""The call log: intent on disk before a call runs, results after; resume and replay
never run a recorded call again, and never retry one whose result is unknown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import (Agent, CallLog, CommandTool, RunResult, ScriptedModel, Workspace, say,
                     tool, tool_call)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_the_intent_is_on_disk_before_the_tool_runs(tmp_path):
    path = tmp_path / "calls.jsonl"
    seen = []

    @tool
    def ping() -> str:
        """Ping."""
        seen.append([(e["phase"], e.get("call_id")) for e in lines(path)])
        return "pong"

    model = ScriptedModel([tool_call("ping", id="c1"), say("ok")])
    Agent(model, [ping]).run("go", call_log=CallLog(path))
    assert seen == [[("reply", None), ("intent", "c1")]]
    assert [(e["phase"], e.get("call_id")) for e in lines(path)] == [
        ("reply", None), ("intent", "c1"), ("result", "c1"), ("reply", None)]


def test_no_call_runs_when_its_intent_cannot_be_written(tmp_path):
    ran = []

    @tool
    def launch() -> str:
        """Has an effect."""
        ran.append(1)
        return "launched"

    unwritable = tmp_path / "no-such-folder" / "calls.jsonl"
    model = ScriptedModel([tool_call("launch", id="c1"), say("ok")])
    result = Agent(model, [launch]).run("go", call_log=CallLog(unwritable))
    assert ran == []
    [done] = [e for e in result.events if e.type == "tool_result"]
    assert done.status == "unlogged"
    assert done.output == ("Not run: its intent could not be written to the call log "
                           "(No such file or directory).")
    assert result.messages[3]["content"] == done.output


CRASHING_RUN = textwrap.dedent("""
    import os, sys
    from harness import Agent, CallLog, ScriptedModel, tool, tool_call, say

    @tool
    def note(text: str) -> str:
        '''Append a line to notes.txt.'''
        with open("notes.txt", "a") as f:
            f.write(text + "\\n")
        if text == "second":
            os._exit(9)  # the process dies between this call's intent and its result
        return "noted"

    model = ScriptedModel([tool_call("note", text="first"), tool_call("note", text="second"),
                           say("done")])
    Agent(model, [note]).run("go", call_log=CallLog(sys.argv[1]))
""")


def test_a_run_resumed_after_a_crash_reruns_nothing_and_reports_the_unknown_call(tmp_path):
    log_path = tmp_path / "calls.jsonl"
    crashed = subprocess.run([sys.executable, "-c", CRASHING_RUN, str(log_path)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert crashed.returncode == 9
    assert (tmp_path / "notes.txt").read_text() == "first\nsecond\n"
    log = CallLog(log_path)
    assert [e["call_id"] for e in log.unfinished()] == ["call_2_0"]

    ran = []

    @tool
    def note(text: str) -> str:
        """Append a line to notes.txt."""
        ran.append(text)
        return "noted"

    model = ScriptedModel([*log.replies(), say("Resumed: the second note may or may not "
                                               "have been written.")])
    result = Agent(model, [note]).run("go", call_log=log)
    assert ran == []
    statuses = [(e.call_id, e.status) for e in result.events if e.type == "tool_result"]
    assert statuses == [("call_1_0", "recorded"), ("call_2_0", "unknown")]
    assert result.messages[3]["content"] == "noted"
    assert result.messages[5]["content"].startswith("Not run again: this call was started")
    assert result.outcome == "completed"


def test_replaying_a_saved_run_never_repeats_a_side_effect(tmp_path):
    ws = Workspace.sample(tmp_path / "first")
    (ws.root / "tools" / "append.py").write_text(
        "import sys\nopen('exports.txt', 'a').write(sys.argv[1] + '\\n')\nprint('exported')\n",
        encoding="utf-8")
    export = CommandTool("export_order", "Export an order.", params={"order": "the order id"},
                         template="python tools/append.py {order}", cwd=ws.root)
    script = [tool_call("read_file", path="data/records/ORD-1002.json"),
              tool_call("write_file", path="notes/reply.md", content="draft 1"),
              tool_call("export_order", order="ORD-1002"),
              say("Exported.")]
    saved = Agent(ScriptedModel(script), [*ws.tools, export]).run("go").save(
        tmp_path / "run.json")
    (ws.root / "notes" / "reply.md").write_text("edited by a person", encoding="utf-8")
    (ws.root / "data" / "records" / "ORD-1002.json").write_text('{"id": "changed"}')

    replay = Agent(ScriptedModel.from_run(saved), [*ws.tools, export]).run(
        "go", call_log=CallLog.from_run(saved))
    assert (ws.root / "exports.txt").read_text() == "ORD-1002\n"  # exported once only
    assert (ws.root / "notes" / "reply.md").read_text() == "edited by a person"
    statuses = [(e.tool_name, e.status) for e in replay.events if e.type == "tool_result"]
    assert statuses == [("read_file", "ok"), ("write_file", "recorded"),
                        ("export_order", "recorded")]
    assert replay.messages[3]["content"] == '{"id": "changed"}'  # read-only tools run again
    assert replay.messages[5:] == RunResult.load(saved).messages[5:]


def test_a_replay_can_be_asked_to_run_every_tool_again(tmp_path):
    ws = Workspace(tmp_path)
    saved = Agent(ScriptedModel([tool_call("write_file", path="a.txt", content="x"),
                                 say("ok")]), ws.tools).run("go")
    os.remove(tmp_path / "a.txt")
    again = Agent(ScriptedModel.from_run(saved), ws.tools).run(
        "go", call_log=CallLog.from_run(saved, reuse="none"))
    assert (tmp_path / "a.txt").read_text() == "x"
    assert [e.status for e in again.events if e.type == "tool_result"] == ["ok"]


def test_reuse_must_be_a_known_mode():
    with pytest.raises(ValueError, match="reuse"):
        CallLog(reuse="sometimes")


def test_a_call_interrupted_while_running_is_left_unfinished_in_the_log():
    log = CallLog()

    @tool
    def hang() -> str:
        """Interrupted while it runs."""
        raise KeyboardInterrupt

    result = Agent(ScriptedModel([tool_call("hang", id="c1")]), [hang]).run("go", call_log=log)
    assert result.outcome == "cancelled"
    assert [e["call_id"] for e in log.unfinished()] == ["c1"]
    assert "result is unknown" in result.messages[-1]["content"]


class LiveLike:
    """A stand-in for a live model: its call ids are new every time, as a provider's are."""

    model, context_window = "live-like", 32_000

    def __init__(self) -> None:
        self.requests: list[list[dict]] = []

    def complete(self, messages, tools, tool_choice=None):
        from harness.models import parse_reply

        self.requests.append([dict(m) for m in messages])
        if len(self.requests) == 1:  # it writes the second note again, under a new id
            return parse_reply(tool_call("note", text="second", id=f"call_{id(self)}"))
        return parse_reply(say("Resumed; the second note was written again on purpose."))


def test_a_crashed_run_resumes_against_a_live_model_without_rerunning_what_the_log_answers(
        tmp_path):
    from harness.durable import resumed

    log_path = tmp_path / "calls.jsonl"
    crashed = subprocess.run([sys.executable, "-c", CRASHING_RUN, str(log_path)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert crashed.returncode == 9
    ran = []

    @tool
    def note(text: str) -> str:
        """Append a line to notes.txt."""
        ran.append(text)
        return "noted"

    log, live = CallLog(log_path), LiveLike()
    model = resumed(log, live)
    result = Agent(model, [note]).run("go", call_log=log)
    statuses = [(e.call_id, e.status) for e in result.events if e.type == "tool_result"]
    assert statuses[:2] == [("call_1_0", "recorded"), ("call_2_0", "unknown")]
    assert ran == ["second"]  # only the live model's own new call ran
    assert model.replayed == 2 and len(live.requests) == 2
    first_live = live.requests[0]
    assert [m["role"] for m in first_live] == ["system", "user", "assistant", "tool",
                                               "assistant", "tool"]
    assert first_live[5]["content"].startswith("Not run again")
    assert result.outcome == "completed"
    assert next(e for e in result.events if e.type == "run_start").model == "live-like"
