"""Issue 17 (second outside attack) on the call log, replay and the terminal.

- A recorded answer answers only the same call: same agent, call id, tool and arguments
  (the ids the harness makes up restart at ``call_1_0`` in every process).
- A replay never runs a call the recorded run did not finish: an ``unknown`` call, a
  blocked or unlogged one, one interrupted while it ran.
- A lone surrogate (``"\\udc80"`` is valid JSON) survives every write: the call log, a
  saved run, the terminal; ``run()`` returns a `RunResult`.
- A torn line in the call log (kill -9, a full disk) does not stop a resume.
- Nothing from outside reaches a terminal unescaped.
"""

from __future__ import annotations

import json
import os
import unicodedata
import warnings
from pathlib import Path

import pytest

from harness import (Agent, CallLog, OpenAIModel, Permissions, RunResult, ScriptedModel,
                     Workspace, say, tool, tool_call)
from harness.events import Event
from harness.ui import cli
from harness.ui.cli import StreamPrinter, main, print_event
from harness.ui.display import format_event
from tests.fake_openai import reply

pytest_plugins = ("tests.fake_openai",)  # the `fake_openai` fixture

LONE = "\udc80"  # a lone surrogate: valid JSON ("\udc80"), not encodable as UTF-8
OSC52 = "\x1b]52;c;SGVsbG8=\x07"  # writes "Hello" to the terminal's clipboard
TITLE = "\x1b]0;pwned\x07"  # changes the terminal's title
HOSTILE = f"x{OSC52}{TITLE}\u202e{LONE}y"


def statuses(result: RunResult) -> list[tuple[str, str]]:
    return [(e.tool_name, e.status) for e in result.events if e.type == "tool_result"]


def counting(side_effects: list, *, interrupt_first: bool = False):
    """``charge``: a side effect that counts itself (optionally killed the first time)."""

    @tool(side_effects=True)
    def charge(card: str, cents: int) -> str:
        """Charge a card."""
        side_effects.append((card, cents))
        if interrupt_first and len(side_effects) == 1:
            raise KeyboardInterrupt  # the run dies after the charge, before its result
        return f"charged {cents} to {card}"

    return charge


# -- High 2: a recorded answer must be the same call -----------------------------------

@pytest.mark.parametrize("second", [
    tool_call("write_file", path="b.txt", content="two"),  # same tool, other arguments
    tool_call("write_file", path="a.txt", content="two"),  # one argument differs
    tool_call("edit_file", path="a.txt", old="one", new="two"),  # another tool
])
def test_a_resumed_run_whose_new_call_reuses_an_old_made_up_id_runs_the_new_call(tmp_path,
                                                                                 second):
    ws = Workspace(_folder(tmp_path / "ws"))
    path = tmp_path / "calls.jsonl"
    first = Agent(ScriptedModel([tool_call("write_file", path="a.txt", content="one"),
                                 say("ok")]), ws.tools).run("first", call_log=CallLog(path))
    assert [e.call_id for e in first.events if e.type == "tool_call"] == ["call_1_0"]
    again = Agent(ScriptedModel([second, say("ok")]), ws.tools).run(
        "second", call_log=CallLog(path))
    [call] = [e for e in again.events if e.type == "tool_call"]
    assert call.call_id == "call_1_0"  # the same made-up id, a different call
    assert statuses(again) == [(second["tool_calls"][0]["function"]["name"], "ok")]
    args = json.loads(second["tool_calls"][0]["function"]["arguments"])
    written = (ws.root / args["path"]).read_text(encoding="utf-8")
    assert written == "two"


def test_the_same_call_is_answered_from_the_record_even_after_its_id_was_reused(tmp_path):
    ws = Workspace(_folder(tmp_path / "ws"))
    path = tmp_path / "calls.jsonl"
    write_a = tool_call("write_file", path="a.txt", content="one")
    Agent(ScriptedModel([write_a, say("ok")]), ws.tools).run("a", call_log=CallLog(path))
    Agent(ScriptedModel([tool_call("write_file", path="b.txt", content="two"), say("ok")]),
          ws.tools).run("b", call_log=CallLog(path))
    assert (ws.root / "b.txt").read_text() == "two"  # ran: not the call of the record
    os.remove(ws.root / "a.txt")
    # The first run again, its arguments in another order: the same call, from the record.
    same = {**write_a, "tool_calls": [{**write_a["tool_calls"][0], "function": {
        "name": "write_file", "arguments": '{ "content": "one",  "path": "a.txt" }'}}]}
    resumed = Agent(ScriptedModel([same, say("ok")]), ws.tools).run(
        "a", call_log=CallLog(path))
    assert statuses(resumed) == [("write_file", "recorded")]
    assert not (ws.root / "a.txt").exists()
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[2])
    assert first["phase"] == "result" and first["call_id"] == "call_1_0"
    assert resumed.messages[3]["content"] == first["output"]  # a.txt's answer, not b.txt's


def test_an_unfinished_call_is_reported_unknown_only_to_the_same_call(tmp_path):
    for content, status, written in (("one", "unknown", False),  # the same call: it may have run
                                     ("two", "ok", True)):  # another call, the same id: it runs
        ws = Workspace(_folder(tmp_path / content))
        path = ws.root / "calls.jsonl"
        CallLog(path).intent("main", "call_1_0", "write_file",
                             {"path": "a.txt", "content": "one"})
        result = Agent(ScriptedModel([tool_call("write_file", path="a.txt", content=content),
                                      say("ok")]), ws.tools).run("go", call_log=CallLog(path))
        assert statuses(result) == [("write_file", status)]
        assert (ws.root / "a.txt").exists() is written


# -- High 3: a replay never runs a call the recorded run did not finish -----------------

@pytest.mark.parametrize("reuse", ["side_effects", "all", "none"])
def test_a_replay_never_runs_again_a_call_whose_result_was_unknown(tmp_path, reuse):
    charges: list = []
    path = tmp_path / "calls.jsonl"
    script = [tool_call("charge", card="4242", cents=500), say("Charged.")]
    killed = Agent(ScriptedModel(script), [counting(charges, interrupt_first=True)]).run(
        "Charge the card", call_log=CallLog(path))
    assert killed.outcome == "cancelled" and len(charges) == 1

    log = CallLog(path)  # resumed: the charge is reported, never retried
    resumed = Agent(ScriptedModel([*log.replies(), say("The charge may have gone through.")]),
                    [counting(charges)]).run("Charge the card", call_log=log)
    assert statuses(resumed) == [("charge", "unknown")] and len(charges) == 1
    saved = resumed.save(tmp_path / "run.json")

    replay = Agent(ScriptedModel.from_run(saved), [counting(charges)]).run(
        "Charge the card", call_log=CallLog.from_run(saved, reuse=reuse))
    assert len(charges) == 1  # charged once, whatever the replay
    assert statuses(replay) == [("charge", "unknown")]
    assert replay.messages == RunResult.load(saved).messages


def _blocked(tmp_path, charges):
    return Agent(ScriptedModel([tool_call("charge", card="4242", cents=500), say("No.")]),
                 [counting(charges)], permissions=Permissions({"charge": "deny"})).run("go")


def _unlogged(tmp_path, charges):
    return Agent(ScriptedModel([tool_call("charge", card="4242", cents=500), say("No.")]),
                 [counting(charges)]).run(
        "go", call_log=CallLog(tmp_path / "no-such-folder" / "calls.jsonl"))


def _interrupted(tmp_path, charges):
    return Agent(ScriptedModel([tool_call("charge", card="4242", cents=500), say("No.")]),
                 [counting(charges, interrupt_first=True)]).run("go")


@pytest.mark.parametrize("record", [_blocked, _unlogged, _interrupted])
def test_a_replay_never_runs_a_call_the_recorded_run_did_not_finish(tmp_path, record):
    charges: list = []
    saved = record(tmp_path, charges).save(tmp_path / "run.json")
    before = len(charges)
    replay = Agent(ScriptedModel.from_run(saved), [counting(charges)]).run(
        "go", call_log=CallLog.from_run(saved))
    assert len(charges) == before
    [done] = [e for e in replay.events if e.type == "tool_result"]
    assert not done.ran and not done.ok


# -- High 4: a lone surrogate survives every write ----------------------------------------

@tool
def echo(text: str) -> str:
    """Echo a text."""
    return f"echo {text}"


@tool
def odd() -> str:
    """Return a text with a lone surrogate."""
    return f"odd {LONE} output"


@tool
def separators() -> str:
    """Return a text with the line separators JSON leaves as they are."""
    return "a\u2028b\x85c\u2029d"


SOURCES = {
    "tool output": ([odd], [tool_call("odd"), say("ok")]),
    "line separators": ([separators], [tool_call("separators"), say("ok \u2028")]),
    # (pydantic refuses a lone surrogate in arguments: invalid_arguments, and nothing runs)
    "tool arguments": ([echo], [tool_call("echo", text=f"a {LONE} b"), say("ok")]),
    "model reply": ([], [say(f"the answer {LONE}")]),
    "sub-agent answer": ([], [tool_call("delegate_task", task="look it up"),
                              say(f"child {LONE}"), say("parent done")]),
    "task and reasoning": ([echo], [{**tool_call("echo", text="x"),
                                     "reasoning_content": f"hm {LONE}"}, say("ok")]),
}


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_lone_surrogate_from_outside_survives_the_call_log_and_a_saved_run(tmp_path,
                                                                             source):
    tools, script = SOURCES[source]
    path = tmp_path / "calls.jsonl"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no write may fail, not even with a warning
        result = Agent(ScriptedModel(script), tools, subagents=True).run(
            f"task {LONE}", call_log=CallLog(path))
    assert isinstance(result, RunResult) and result.outcome == "completed", result.error
    assert LONE in json.dumps(result.messages, ensure_ascii=False)

    back = CallLog(path)  # every entry was written, and reads back as it was
    assert back.entries == json.loads(json.dumps(CallLog(path).entries))
    written = [e for e in back.entries if e["phase"] in ("intent", "result")]
    assert len(written) == 2 * sum(e.type == "tool_result" and e.ran for e in result.events)
    replies = [e.message for e in result.events if e.type == "model_reply"]
    assert [{k: r.get(k) for k in ("content", "tool_calls")} for r in back.replies()] == [
        {k: m.get(k) for k in ("content", "tool_calls")} for m in replies]
    again = Agent(ScriptedModel.from_run(CallLog(path)), tools, subagents=True).run(
        f"task {LONE}")
    assert again.messages == result.messages

    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    assert loaded.messages == result.messages and loaded.final == result.final
    assert loaded.events == result.events


def test_a_lone_surrogate_from_a_provider_survives_the_log_and_the_save(tmp_path,
                                                                        fake_openai):
    # Only in the last reply: a transcript holding one cannot be sent again (the SDK
    # encodes the request as UTF-8: live/openai_model.py's concern, not the log's).
    call = {"id": "c1", "type": "function",
            "function": {"name": "echo", "arguments": '{"text": "x"}'}}
    fake_openai.add(reply({"content": None, "tool_calls": [call]}),
                    reply({"content": f"done {LONE}"}))  # sent as JSON: "\udc80"
    model = OpenAIModel(model="fake-model", base_url=fake_openai.base_url,
                        api_key="sk-test-0123456789abcdefghij", max_retries=0)
    path = tmp_path / "calls.jsonl"
    result = Agent(model, [echo]).run("go", call_log=CallLog(path))
    assert (result.outcome, result.final) == ("completed", f"done {LONE}"), result.error
    back = CallLog(path).entries
    assert [e["phase"] for e in back] == ["reply", "intent", "result", "reply"]
    assert back[-1]["message"]["content"] == f"done {LONE}"
    assert RunResult.load(result.save(tmp_path / "run.json")).messages == result.messages


# -- Medium 7: a torn line does not stop a resume ----------------------------------------

@tool
def note(text: str) -> str:
    """Write a note."""
    return f"noted {text}"


TORN = {  # where the write stopped, in the line of the second call's intent
    "mid-string": lambda line: line[: len(line) // 2],
    "mid-character": lambda line: line[: line.index("é".encode()) + 1],
    "before the newline": lambda line: line[:-1],
}


@pytest.mark.parametrize("cut", list(TORN))
def test_a_torn_last_line_in_the_call_log_is_skipped_and_the_run_resumes(tmp_path, cut):
    path = tmp_path / "calls.jsonl"
    ran: list[str] = []

    @tool
    def note(text: str) -> str:
        """Write a note."""
        ran.append(text)
        return f"noted {text}"

    script = [tool_call("note", text="first"), tool_call("note", text="sécond"), say("done")]
    Agent(ScriptedModel(script), [note]).run("go", call_log=CallLog(path))
    lines = path.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[4])["phase"] == "intent"
    path.write_bytes(b"".join(lines[:4]) + TORN[cut](lines[4]))  # killed writing the intent
    ran.clear()

    if cut == "before the newline":
        log = CallLog(path)  # a whole entry: the intent is on record
    else:
        with pytest.warns(RuntimeWarning, match="line 5"):
            log = CallLog(path)
    resumed = Agent(ScriptedModel([*log.replies(), say("done")]), [note]).run(
        "go", call_log=log)
    assert resumed.outcome == "completed"
    if cut == "before the newline":  # its intent was written: it may have run
        assert statuses(resumed) == [("note", "recorded"), ("note", "unknown")]
        assert ran == []
    else:  # a torn intent: the call never started (the intent comes first), so it runs
        assert statuses(resumed) == [("note", "recorded"), ("note", "ok")]
        assert ran == ["sécond"]
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        after = CallLog(path)  # what the resumed run wrote starts on a line of its own
    assert after.entries[-1]["phase"] == "reply"
    assert after.entries[-1]["message"]["content"] == "done"


def test_a_corrupt_line_in_the_middle_of_the_call_log_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "calls.jsonl"
    Agent(ScriptedModel([tool_call("note", text="a"), say("done")]), [note]).run(
        "go", call_log=CallLog(path))
    lines = path.read_bytes().splitlines(keepends=True)
    for junk in (b"\x00\xff garbage\n", b"[1, 2]\n", b'{"phase": "result"}\n'):
        path.write_bytes(b"".join(lines[:2]) + junk + b"".join(lines[2:]))
        with pytest.warns(RuntimeWarning, match="line 3"):
            log = CallLog(path)
        assert [e["phase"] for e in log.entries] == ["reply", "intent", "result", "reply"]


# -- Medium 10: nothing from outside reaches a terminal unescaped ---------------------------

def raw_controls(text: str) -> list[str]:
    """Characters a terminal could obey or that reorder text: none may be printed."""
    return [c for c in text if c not in "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs")]


EVENTS = [
    Event("run_start", "main", 0, {"task": HOSTILE, "tools": []}),
    Event("run_start", "main/1", 1, {"task": HOSTILE, "tools": []}),
    Event("tool_call", "main", 0, {"call_id": HOSTILE, "tool_name": HOSTILE,
                                   "arguments": {HOSTILE: HOSTILE}, "runnable": False}),
    Event("tool_call", "main", 0, {"call_id": "c", "tool_name": "x", "arguments": HOSTILE,
                                   "runnable": False}),
    Event("tool_result", "main", 0, {"call_id": "c", "tool_name": HOSTILE, "ok": False,
                                     "output": f"Error: unknown tool '{HOSTILE}'",
                                     "status": "unknown_tool", "ran": False}),
    Event("tool_result", "main", 0, {"call_id": "c", "tool_name": "t", "ok": False,
                                     "output": "x", "status": HOSTILE, "ran": False}),
    Event("subagent_start", "main", 0, {"child_id": HOSTILE, "task": HOSTILE}),
    Event("subagent_end", "main", 0, {"child_id": HOSTILE, "outcome": HOSTILE,
                                      "tool_calls": 1, "usage": {"total_tokens": 3}}),
    Event("approval_request", "main", 0, {"tool_name": HOSTILE, "arguments": {}}),
    Event("approval_result", "main", 0, {"tool_name": HOSTILE, "approved": False}),
    Event("tool_choice_fallback", "main", 0, {"requested": HOSTILE, "sent": HOSTILE}),
    Event("answer_refused", "main", 0, {"reason": HOSTILE}),
    Event("model_partial", "main", 0, {"text": HOSTILE, "reasoning": "", "call": None}),
    Event("stop_gate", "main", 0, {"open_items": [HOSTILE]}),
    Event("run_end", "main", 0, {"outcome": HOSTILE, "final": HOSTILE, "error": HOSTILE,
                                 "turns": 1, "usage": {}}),
]


def test_every_event_line_the_terminal_or_the_panel_prints_is_escaped():
    for event in EVENTS:
        lines: list[str] = []
        print_event(event, lines.append)
        for line in [*lines, format_event(event) or ""]:
            line.encode("utf-8")  # printable on any UTF-8 terminal: no lone surrogate
            assert raw_controls(line) == [], (event, line)


def test_a_run_in_the_terminal_prints_no_escape_sequence_from_the_model(capsys):
    written: list[str] = []
    printer = StreamPrinter(write=written.append)
    model = ScriptedModel([tool_call(OSC52 + TITLE, text="x"),  # an unknown tool
                           tool_call("delegate_task", task=f"look {TITLE}"),
                           say(f"child {OSC52}"), say(f"answer {TITLE}")], stream=True)
    result = Agent(model, [echo], subagents=True, observers=[printer]).run(f"task {TITLE}")
    printer.end_line()
    assert result.outcome == "completed"
    out = "".join(written)
    assert "unknown tool" in out and "look" in out
    assert raw_controls(out) == [], out


def test_the_cli_report_escapes_the_error_and_the_answer(capsys):
    cli._report(RunResult("model_error", f"answer {HOSTILE}", [], error=f"bad {HOSTILE}"))
    out = capsys.readouterr().out
    assert "bad x" in out and "answer x" in out
    assert raw_controls(out) == [], out


def test_replay_prints_a_saved_run_and_its_path_escaped(tmp_path, capsys):
    model = ScriptedModel([tool_call(OSC52, text="x"), say(f"answer {TITLE}")])
    folder = tmp_path / f"runs{TITLE}"
    folder.mkdir()
    saved = Agent(model, Workspace(_folder(tmp_path / "ws")).tools).run(
        f"task {OSC52} {TITLE}").save(folder / "run.json")
    capsys.readouterr()
    assert main(["replay", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "Replaying" in out and "task" in out and "unknown tool" in out
    assert raw_controls(out) == [], out


def test_replay_of_a_file_that_is_not_a_saved_run_says_so_and_exits_2(tmp_path, capsys):
    log = tmp_path / f"calls{TITLE}.jsonl"
    Agent(ScriptedModel([say("ok")])).run("go", call_log=CallLog(log))
    assert main(["replay", str(log)]) == 2
    err = capsys.readouterr().err
    assert "Cannot replay" in err and "ScriptedModel.from_run(CallLog(path))" in err
    assert raw_controls(err) == [], err


def test_a_live_run_prints_the_model_name_escaped(tmp_path, capsys, monkeypatch, fake_openai):
    from harness.live.openai_model import PROVIDER_VARIABLES

    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HARNESS_MODEL", f"model{TITLE}")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setattr(cli.Workspace, "sample", lambda: Workspace(_folder(tmp_path / "ws")))
    fake_openai.add(reply({"content": f"hello {OSC52}"}))
    main(["run", f"say hello {TITLE}"])
    out = capsys.readouterr().out
    assert "Live run on model" in out and "hello" in out
    assert raw_controls(out) == [], out


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
