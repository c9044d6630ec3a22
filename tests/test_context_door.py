"""Issue 27, points 1, 2, 5 and 7: compaction keeps the core's guarantees through the door.

1. the summary request is a request: the run's clock, cancel, budget and record;
2. an offloaded result is written through the door: never through a link;
5. a replay or a resume never answers the agent with a summary;
7. compaction cannot thrash: the fixed part is checked, no request passes the window,
   no compaction makes a request bigger, the summary request cuts from the middle, a
   failed summary is an event, a huge message is stubbed, compactions stay rare.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from pydantic import create_model

from harness import Agent, ScriptedModel, Tool, Workspace, say, tool, tool_call
from harness.context import request_tokens
from harness.durable import CallLog, resumed

WINDOW = 4000
TASK = "Read six pages and answer."
SUMMARY_SYSTEM = "You summarise"  # how a summary request starts (compaction.SUMMARY_PROMPT)


@tool
def fetch(n: int) -> str:
    """Fetch a long page."""
    return f"page {n}: " + "lorem ipsum " * 420  # about 5,000 characters


def pages(n: int = 6) -> list[dict]:
    return [tool_call("fetch", n=i) for i in range(n)]


def summariser(text: str = "Fetched pages; each is lorem ipsum.") -> ScriptedModel:
    return ScriptedModel([say(text)] * 50)


def summary_requests(result) -> list:
    return [e for e in result.events if e.type == "model_request" and e.get("purpose") == "summary"]


def summary_replies(result) -> list:
    return [e for e in result.events if e.type == "model_reply" and e.get("purpose") == "summary"]


def tool_outputs(result) -> list[str]:
    return [m["content"] for m in result.messages if m["role"] == "tool"]


class Blocking:
    """A summary model that hangs until released (or 5 s): a server that never ends."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked = 0

    def complete(self, messages, tools, tool_choice=None):
        self.asked += 1
        self.release.wait(5)
        return ScriptedModel([say("late summary")]).complete(messages, tools, tool_choice)


# -- 1. the summary request is a request -------------------------------------------------

def test_a_hung_summary_request_cannot_hold_a_run_past_max_seconds():
    slow = Blocking()
    agent = Agent(ScriptedModel([*pages(), say("Done.")]), [fetch], context_window=WINDOW,
                  summary_model=slow, max_seconds=0.5)
    started = time.monotonic()
    try:
        result = agent.run(TASK)
    finally:
        slow.release.set()
    assert slow.asked, "no summary was asked for: the test proves nothing"
    assert result.outcome == "time_limit"
    assert time.monotonic() - started < 2.5  # before: the 5 s of the summary, then time_limit


def test_a_cancel_stops_a_run_waiting_for_its_summary():
    slow, cancel = Blocking(), threading.Event()
    agent = Agent(ScriptedModel([*pages(), say("Done.")]), [fetch], context_window=WINDOW,
                  summary_model=slow)
    timer = threading.Timer(0.3, cancel.set)
    started = time.monotonic()
    timer.start()
    try:
        result = agent.run(TASK, cancel=cancel)
    finally:
        timer.cancel()
        slow.release.set()
    assert slow.asked and result.outcome == "cancelled"
    assert time.monotonic() - started < 2.5  # before: ended only when the summary came back


def test_summary_requests_are_counted_in_result_requests():
    model, summary = ScriptedModel([*pages(), say("Done.")]), summariser()
    result = Agent(model, [fetch], context_window=WINDOW, summary_model=summary).run(TASK)
    assert result.outcome == "completed" and summary.requests
    assert len(summary_requests(result)) == len(summary.requests)
    assert result.requests == len(model.requests) + len(summary.requests)


def test_a_summary_request_spends_max_requests():
    def run(limit: int | None):
        model, summary = ScriptedModel([*pages(), say("Done.")]), summariser()
        result = Agent(model, [fetch], context_window=WINDOW, summary_model=summary,
                       max_requests=limit).run(TASK)
        return result, len(model.requests) + len(summary.requests)

    _, needed = run(None)
    assert run(needed)[0].outcome == "completed"
    assert run(needed - 1)[0].outcome == "request_limit"


# -- 2. offloaded results never follow a link ----------------------------------------------

def workspace_run(root: Path, *, tools=(), steps=()) -> tuple:
    """Six reads of a big workspace file, compacted into ``context/``."""
    (root / "big.txt").write_text("line of the log\n" * 400, encoding="utf-8")
    reads = [tool_call("read_file", id=f"r{i}", path="big.txt") for i in range(6)]
    model = ScriptedModel([*reads[:2], *steps, *reads[2:], say("ok")])
    result = Agent(model, [*Workspace(root).tools, *tools], context_window=WINDOW,
                   offload_dir="context", summary_model=summariser()).run("Read the log.")
    stubs = [str(m["content"]) for r in model.requests for m in r["messages"]
             if m["role"] == "tool" and "[compacted" in str(m["content"])]
    return result, stubs


def test_offloading_into_a_linked_folder_writes_nothing_outside(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "context").symlink_to(outside, target_is_directory=True)
    result, stubs = workspace_run(root)
    assert result.outcome == "completed" and stubs
    assert list(outside.iterdir()) == []  # before: every stub written in the linked folder
    assert all("could not be kept" in stub for stub in stubs)


def test_a_link_at_the_next_stubs_name_is_never_written_through(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "context").mkdir(parents=True)
    outside.mkdir()
    keys = outside / "authorized_keys"
    keys.write_text("ssh-ed25519 AAAA the owner's key\n", encoding="utf-8")
    for index in range(1, 40):  # every name a stub may take (index in the transcript, call id)
        for call in range(6):
            (root / "context" / f"{index:05d}-r{call}.txt").symlink_to(keys)
    result, stubs = workspace_run(root)
    assert result.outcome == "completed" and stubs
    assert keys.read_text(encoding="utf-8") == "ssh-ed25519 AAAA the owner's key\n"
    assert sorted(p.name for p in outside.iterdir()) == ["authorized_keys"]
    assert any("could not be kept" in stub for stub in stubs)


def test_a_folder_swapped_for_a_link_during_the_run_is_not_followed(tmp_path):
    root, outside = tmp_path / "ws", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()

    @tool
    def relink() -> str:
        """Stands for a sandboxed shell that links the offload folder elsewhere."""
        folder = root / "context"
        if folder.exists():
            folder.rename(root / "context-old")
        folder.symlink_to(outside, target_is_directory=True)
        return "linked"

    result, stubs = workspace_run(root, tools=[relink], steps=[tool_call("relink")])
    assert result.outcome == "completed" and stubs
    assert list(outside.iterdir()) == []


# -- 5. a replay or a resume never answers with a summary ----------------------------------

class Live:
    """A model that answers summary requests itself and the agent from a script, as a live
    model does whatever the harness asks of it (the summary model is the agent's own)."""

    def __init__(self, steps: list[dict]) -> None:
        self.script = ScriptedModel(steps)
        self.summaries = 0

    def complete(self, messages, tools, tool_choice=None):
        if str(messages[0].get("content") or "").startswith(SUMMARY_SYSTEM):
            self.summaries += 1
            return ScriptedModel([say(f"Summary {self.summaries}: pages read.")]).complete(
                messages, tools, tool_choice)
        return self.script.complete(messages, tools, tool_choice)


def original(*, separate: bool, call_log: CallLog | None = None):
    steps = [*pages(8), say("All eight pages are lorem ipsum.")]
    model = Live(steps)
    summary = summariser() if separate else None
    result = Agent(model, [fetch], context_window=WINDOW, summary_model=summary).run(
        TASK, call_log=call_log)
    assert result.outcome == "completed" and summary_replies(result), "nothing to replay"
    return result


def assert_same_run(replay, result) -> None:
    assert replay.outcome == "completed"
    assert replay.final == result.final
    assert tool_outputs(replay) == tool_outputs(result)  # every call answered, as before


REPLAYS = {  # how a replay may be set up: each must answer the agent as the original did
    "no-window": {},  # as `python -m harness replay` does: the replayed model has no window
    "same-settings": {"context_window": WINDOW},  # summaries answered by the recorded ones
    "own-summary-model": {"context_window": WINDOW, "summary_model": "fresh"},
}


@pytest.mark.parametrize("how", list(REPLAYS))
@pytest.mark.parametrize("source", ["result", "call-log"])
@pytest.mark.parametrize("separate", [False, True], ids=["own-model", "separate-model"])
def test_a_compacted_run_replays_as_the_original(tmp_path, separate, source, how):
    log = tmp_path / "calls.jsonl"
    result = original(separate=separate, call_log=CallLog(log))
    replay = ScriptedModel.from_run(result if source == "result" else CallLog(log))
    settings = dict(REPLAYS[how])
    if settings.get("summary_model") == "fresh":
        settings["summary_model"] = summariser("Another summary.")
    assert_same_run(Agent(replay, [fetch], **settings).run(TASK), result)
    assert replay.remaining == 0  # every reply of the agent was asked for


@pytest.mark.parametrize("separate", [False, True], ids=["own-model", "separate-model"])
def test_a_compacted_run_resumes_from_its_call_log_with_a_live_model(tmp_path, separate):
    crashed = {"yet": False}

    @tool
    def crash() -> str:
        """Stands for the process dying mid-run (once)."""
        if not crashed["yet"]:
            crashed["yet"] = True
            raise KeyboardInterrupt
        return "never run again"

    path, summary = tmp_path / "calls.jsonl", (summariser() if separate else None)
    first = Agent(Live([*pages(8), tool_call("crash"), say("unreached")]), [fetch, crash],
                  context_window=WINDOW, summary_model=summary).run(
        TASK, call_log=CallLog(path))
    assert first.outcome == "cancelled" and summary_replies(first)
    live = Live([say("Eight pages, then a crash.")])
    result = Agent(resumed(CallLog(path), live), [fetch, crash], context_window=WINDOW,
                   summary_model=summariser("Resumed summary.") if separate else None).run(
        TASK, call_log=CallLog(path))
    assert result.outcome == "completed" and result.final == "Eight pages, then a crash."
    outputs = tool_outputs(result)
    assert outputs[:8] == tool_outputs(first)[:8]  # each page answered from the log
    assert "Not run again" in outputs[8]  # the call that was running: unknown, not rerun
    statuses = [e.status for e in result.events if e.type == "tool_result"]
    assert statuses == ["recorded"] * 8 + ["unknown"]


# -- 7. compaction that cannot thrash ------------------------------------------------------

def lookups(schema_tokens: int, count: int = 4) -> list:
    """``count`` tools whose schemas take about ``schema_tokens`` in all; each call returns
    about 150 tokens."""
    made = []
    for i in range(count):
        args = create_model(f"LookupArgs{i}", n=(int, ...))
        bare = Tool(f"look_{i}", "Look something up.", args, lambda n: n)
        pad = schema_tokens * 4 // count - len(json.dumps(bare.schema()))
        made.append(Tool(f"look_{i}", "Look something up. " + "d" * max(0, pad), args,
                         lambda n, i=i: f"result {i}/{n}: " + "data " * 120))
    return made


def within_window(model: ScriptedModel, window: int) -> bool:
    return all(request_tokens(r["messages"], r["tools"]) <= window for r in model.requests)


def test_a_window_too_small_for_the_system_prompt_is_refused_when_the_agent_is_made():
    with pytest.raises(ValueError) as refused:
        Agent(ScriptedModel([say("ok")]), context_window=1000,
              system="You are a careful agent. " * 100)
    error = str(refused.value)
    assert "context_window=1,000 is too small" in error and "system prompt ~6" in error
    assert "at least" in error and "fewer tools" in error  # the figures, and the fix


def test_a_window_too_small_for_the_tool_schemas_is_refused_when_the_agent_is_made():
    with pytest.raises(ValueError, match=r"tool schemas ~1,1\d\d"):
        Agent(ScriptedModel([say("ok")]), lookups(1100), context_window=1600)


def test_a_window_too_small_for_the_tool_schemas_is_said_once_before_any_request():
    model = ScriptedModel([*(tool_call(f"look_{i % 4}", n=i) for i in range(11)), say("ok")])
    try:
        agent = Agent(model, lookups(1100), context_window=1600,
                      summary_model=summariser())
    except ValueError as exc:  # at Agent(), when its layers see its tools
        error = str(exc)
    else:  # else at the first request, which is never sent
        result = agent.run("Look up everything.")
        assert result.outcome == "context_overflow" and model.requests == []
        assert [e.type for e in result.events] == ["run_start", "run_end"]
        error = result.error
    assert "tool schemas ~1,1" in error and "at least" in error  # before: it ran, compacting
    # before almost every request (11 compactions in 12 requests, measured at 52cfada)


def test_a_huge_task_ends_the_run_context_overflow_without_a_request():
    model = ScriptedModel([say("ok")])
    result = Agent(model, context_window=2000).run("Summarise this: " + "word " * 8000)
    assert result.outcome == "context_overflow" and model.requests == []
    assert "task ~10,0" in result.error and "at least" in result.error


def test_a_request_that_cannot_fit_after_compaction_is_not_sent():
    items = [{"content": f"Step {i}: " + "check every detail " * 24, "status": "pending"}
             for i in range(20)]  # a plan of ~10,000 characters, sent whole every time
    model = ScriptedModel([tool_call("todo_write", todos=items), say("Done.")])
    result = Agent(model, planning=True, context_window=2000,
                   summary_model=summariser()).run("Plan the audit.")
    assert result.outcome == "context_overflow"
    assert "plan ~2," in result.error and "context_window=2,000" in result.error
    assert len(model.requests) == 1 and within_window(model, 2000)  # the second never sent


@tool
def save(text: str) -> str:
    """Save a text."""
    return f"saved {len(text):,} characters"


def test_a_huge_call_argument_is_stubbed_and_the_transcript_keeps_it():
    model = ScriptedModel([tool_call("save", text="x" * 40_000), say("Saved.")])
    result = Agent(model, [save], context_window=2000).run("Save forty thousand x.")
    assert result.outcome == "completed"
    assert within_window(model, 2000)  # before: ~10,000 tokens into a 2,000-token window
    sent = model.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"]
    assert "the arguments of save (40,012 characters)" in json.loads(sent)["compacted"]
    assert len(result.messages[2]["tool_calls"][0]["function"]["arguments"]) == 40_012


def test_a_huge_write_file_call_is_offloaded_and_read_back(tmp_path):
    text = "line of a long report\n" * 1800  # about 40,000 characters
    model = ScriptedModel([tool_call("write_file", path="report.md", content=text),
                           say("Written.")])
    result = Agent(model, Workspace(tmp_path).tools, context_window=3000,
                   offload_dir="context").run("Write the report.")
    assert result.outcome == "completed" and within_window(model, 3000)
    stub = json.loads(model.requests[1]["messages"][2]["tool_calls"][0]["function"]["arguments"])
    path = stub["compacted"].split('read_file("')[1].split('")')[0]
    assert json.loads((tmp_path / path).read_text(encoding="utf-8"))["content"] == text


def verbose_run(**settings):
    """A long run at a small but workable window: 30 rounds of ~150 tokens, tool schemas of
    ~650 tokens in a 2,000-token window, and a summary model that writes long summaries."""
    rounds = 30
    model = ScriptedModel([*(tool_call(f"look_{i % 4}", n=i) for i in range(rounds)),
                           say("Looked everything up.")])
    verbose = summariser("Looked many things up; every result was data. " * 60)
    result = Agent(model, lookups(650), context_window=2000, summary_model=verbose,
                   max_turns=rounds + 1, **settings).run("Look up everything.")
    return result, model, rounds


def test_a_long_run_at_a_small_window_compacts_rarely_and_never_passes_the_window():
    result, model, rounds = verbose_run()
    compactions = [e for e in result.events if e.type == "compaction"]
    assert result.outcome == "completed"  # before: request_limit, after 23 compactions
    assert compactions and len(compactions) <= rounds // 3 + 1  # one per keep_rounds + 1
    assert len(summary_requests(result)) <= len(compactions)
    assert within_window(model, 2000)


def test_no_compaction_makes_a_request_bigger():
    result, model, _ = verbose_run()
    compactions = [e for e in result.events if e.type == "compaction"]
    assert compactions
    assert all(e.after_tokens <= e.before_tokens for e in compactions)  # before: 1605 -> 1708
    for e in compactions:  # the request sent after it is the one it measured
        n = sum(x.type == "model_request" and not x.get("purpose")
                for x in result.events[:result.events.index(e)])
        sent = model.requests[n]
        assert request_tokens(sent["messages"], sent["tools"]) == e.after_tokens


def test_a_failed_summary_is_an_event_and_no_fake_summary_is_sent():
    model = ScriptedModel([*pages(), say("Done.")])
    result = Agent(model, [fetch], context_window=WINDOW,
                   summary_model=ScriptedModel([])).run(TASK)  # every summary request fails
    failed = [e for e in result.events if e.type == "summary_failed"]
    assert result.outcome == "completed" and failed
    assert all("no step left" in e.error for e in failed)
    sent = [str(m["content"]) for r in model.requests for m in r["messages"]]
    assert not any("<summary>" in text or "summary request failed" in text for text in sent)
    assert within_window(model, WINDOW)
    last = model.requests[-1]["messages"]  # the old rounds are still there, as stubs
    assert sum(m["role"] == "tool" for m in last) == 6


def test_a_summary_request_sees_the_task_and_the_earlier_summary_first():
    earlier = []
    for turn in range(12):  # a conversation far longer than the window
        earlier += [{"role": "user", "content": f"Question {turn}: " + "why " * 300},
                    {"role": "assistant", "content": f"Answer {turn}: " + "because " * 180}]
    summary = ScriptedModel([say("First summary: twelve answers."),
                             say("Second summary.")] + [say("More.")] * 10)
    model = ScriptedModel([*pages(4), say("Done.")])
    task = "Now read four pages."
    result = Agent(model, [fetch], context_window=WINDOW, summary_model=summary).run(
        task, messages=earlier)
    assert result.outcome == "completed" and len(summary.requests) >= 2
    first, second = (r["messages"][1]["content"] for r in summary.requests[:2])
    assert first.startswith(f"The task: {task}\n\nWhat happened next:\nuser: Question 0")
    assert "characters cut here" in first  # cut from the middle: its start and its end kept
    assert "Answer 9: " in first  # (the last two turns are kept whole, not summarised)
    assert second.startswith(f"The task: {task}\n\nSummary so far:\nFirst summary")
    assert within_window(model, WINDOW)
