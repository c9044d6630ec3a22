"""Issue 18: compaction keeps every request inside the window, a call with its result,
the plan verbatim; the transcript keeps everything; a resumed run keeps its plan."""

from __future__ import annotations

import json

import pytest

from harness import Agent, Hooks, RunResult, ScriptedModel, say, tool, tool_call
from harness.context import request_tokens
from harness.durable import CallLog
from harness.todo import TodoList

WINDOW = 4000
STEPS = ["Read the six pages", "Answer from them"]


@tool
def fetch(n: int) -> str:
    """Fetch a long page."""
    return f"page {n}: " + "lorem ipsum " * 420  # about 5,000 characters


def plan(*statuses: str) -> dict:
    return tool_call("todo_write", todos=[{"content": c, "status": s}
                                          for c, s in zip(STEPS, statuses, strict=True)])


def script(pages: int = 6) -> list:
    return [plan("in_progress", "pending"), *(tool_call("fetch", n=i) for i in range(pages)),
            plan("completed", "in_progress"), plan("completed", "completed"), say("Done.")]


def summariser() -> ScriptedModel:
    """A summary model that builds its summary from what it is sent (the calls it saw)."""
    def summary(messages: list[dict]) -> dict:
        seen = messages[-1]["content"].count("fetch(")
        return say(f"Fetched {seen} more pages; each is lorem ipsum.")
    return ScriptedModel([summary] * 50)


def run(**settings: object) -> tuple[RunResult, ScriptedModel, ScriptedModel]:
    model, summary = ScriptedModel(script()), summariser()
    agent = Agent(model, [fetch], planning=True, context_window=WINDOW, summary_model=summary,
                  **settings)
    return agent.run("Read six pages and answer."), model, summary


def test_no_request_passes_the_window_and_every_call_keeps_its_result():
    result, model, _ = run()
    assert result.outcome == "completed"
    for request in model.requests:
        sent = request["messages"]
        assert request_tokens(sent, request["tools"]) <= WINDOW
        assert sent[0]["role"] == "system" and sum(m["role"] == "system" for m in sent) == 1
        called = set()
        for message in sent:
            called |= {c["id"] for c in message.get("tool_calls") or ()}
            if message["role"] == "tool":
                assert message["tool_call_id"] in called  # its call was sent before it
        answered = {m["tool_call_id"] for m in sent if m["role"] == "tool"}
        assert called <= answered | {c["id"] for c in sent[-1].get("tool_calls") or ()}


def test_the_first_request_after_each_compaction_has_the_task_and_the_plan_verbatim():
    result, model, _ = run()
    compactions = [e for e in result.events if e.type == "compaction"]
    assert compactions, "the run never compacted: the test proves nothing"
    requests = [e for e in result.events if e.type in ("compaction", "model_request")
                and e.depth == 0 and not e.get("purpose")]  # the agent's, not a summary's
    firsts = [i for i, e in enumerate(requests) if e.type == "compaction"]
    for index in firsts:
        turn = sum(e.type == "model_request" for e in requests[:index])
        sent = model.requests[turn]["messages"]
        text = "\n".join(str(m["content"]) for m in sent)
        assert "Read six pages and answer." in text
        assert "[>] Read the six pages" in text or "[x] Read the six pages" in text
    assert all(e.after_tokens < e.before_tokens for e in compactions)


def test_the_transcript_keeps_every_message_and_survives_save_and_load(tmp_path):
    result, _, _ = run()
    outputs = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert sum(text.startswith("page ") and len(text) > 4000 for text in outputs) == 6
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    assert loaded.messages == result.messages
    assert [e.type for e in loaded.events] == [e.type for e in result.events]


def test_a_run_that_ended_token_limit_now_completes():
    budget = 30_000  # the plain run needs about 47,000 input tokens, the compacted one 23,000
    plain = Agent(ScriptedModel(script()), [fetch], planning=True,
                  max_input_tokens=budget).run("Read six pages and answer.")
    assert plain.outcome == "token_limit"
    result, _, _ = run(max_input_tokens=budget)
    assert result.outcome == "completed"


def test_old_results_become_stubs_that_say_where_the_output_is(tmp_path):
    _, model, _ = run(offload_dir=str(tmp_path / "context"))
    stubs = [m["content"] for r in model.requests for m in r["messages"]
             if m["role"] == "tool" and "[compacted" in str(m["content"])]
    assert stubs
    path = stubs[0].split('read_file("')[1].split('")')[0]
    assert open(path, encoding="utf-8").read().startswith("page ")


def test_the_summary_request_has_no_tools_and_its_tokens_count():
    result, _, summary = run()
    assert summary.requests, "no summary was asked for"
    assert all(r["tools"] == [] and r["tool_choice"] is None for r in summary.requests)
    summaries = [e for e in result.events if e.type == "model_reply"
                 and e.get("purpose") == "summary"]
    assert len(summaries) == len(summary.requests)
    assert result.usage["total_tokens"] >= sum(e.usage["total_tokens"] for e in summaries)


def test_pre_compact_and_post_compact_hooks_see_the_compaction():
    seen, hooks = [], Hooks()
    hooks.on("pre_compact", lambda e: seen.append(("pre", e.before_tokens)))
    hooks.on("post_compact", lambda e: seen.append(("post", e.after_tokens)))
    result, _, _ = run(hooks=hooks)
    assert seen and seen[0][0] == "pre" and seen[1][0] == "post"
    assert len(seen) == 2 * sum(e.type == "compaction" for e in result.events)


def test_below_the_threshold_every_request_is_the_transcript_as_it_is():
    model = ScriptedModel([tool_call("fetch", n=0), say("ok")])
    result = Agent(model, [fetch], context_window=100_000).run("one page")
    assert model.requests[-1]["messages"] == result.messages[:-1]
    assert not [e for e in result.events if e.type == "compaction"]


def test_the_model_can_ask_for_a_compaction_with_the_compact_tool():
    model = ScriptedModel([tool_call("fetch", n=0), tool_call("fetch", n=1),
                           tool_call("fetch", n=2), tool_call("compact"), say("ok")])
    result = Agent(model, [fetch], context_window=100_000, keep_rounds=1,
                   summary_model=summariser()).run("pages")
    assert [e.type for e in result.events if e.type in ("pre_compact", "compaction")] == [
        "pre_compact", "compaction"]
    assert sum("[compacted" in str(m["content"]) for m in model.requests[-1]["messages"]) >= 3


def test_a_resumed_run_rebuilds_its_plan_from_the_recorded_todo_write(tmp_path):
    log_path = tmp_path / "calls.jsonl"

    @tool
    def crash() -> str:
        """Stands for the process dying mid-run."""
        raise KeyboardInterrupt

    first = Agent(ScriptedModel([plan("in_progress", "pending"), tool_call("crash")]),
                  [crash], planning=True).run("go", call_log=CallLog(log_path))
    assert first.outcome == "cancelled"
    replies = CallLog(log_path).replies()
    resumed = Agent(ScriptedModel([*replies[:1], say("Done."), say("Done.")]), [crash],
                    planning=True)
    result = resumed.run("go", call_log=CallLog(log_path))
    assert [i.content for i in result.plan] == STEPS  # the plan is back, not empty
    assert result.outcome == "open_items"  # so the stop gate still guards the answer
    assert any(e.type == "stop_gate" for e in result.events)


@pytest.mark.parametrize("window", [50, 0])
def test_a_window_too_small_to_work_in_is_refused_when_the_agent_is_made(window):
    with pytest.raises(ValueError, match="context_window"):
        Agent(ScriptedModel([]), context_window=window)


def test_plan_render_is_what_is_sent_again():
    todo = TodoList()
    todo.update([{"content": STEPS[0], "status": "in_progress"}])
    assert todo.render() == "[>] Read the six pages"


def test_a_conversation_carries_the_plan_its_transcript_holds_and_plan_overrides_it():
    first = Agent(ScriptedModel([plan("completed", "in_progress"), say("Half done."),
                                 say("Half done.")]), planning=True).run("Start.")
    assert first.outcome == "open_items"
    model = ScriptedModel([say("Still one to go."), say("Still one to go.")])
    carried = Agent(model, planning=True).run("Go on.", messages=first.messages)
    assert [i.status for i in carried.plan] == ["completed", "in_progress"]
    assert carried.outcome == "open_items"  # the stop gate sees the carried plan
    fresh = Agent(ScriptedModel([say("ok")]), planning=True).run(
        "Go on.", messages=first.messages, plan=[])
    assert (fresh.plan, fresh.outcome) == ([], "completed")
    sent = model.requests[0]["messages"]
    assert sum(m["role"] == "system" for m in sent) == 1 and sent[-1]["content"] == "Go on."


def test_a_compacted_conversation_keeps_the_earlier_turns_inside_the_window():
    model, summary = ScriptedModel(script() + script()), summariser()
    agent = Agent(model, [fetch], planning=True, context_window=WINDOW, summary_model=summary)
    first = agent.run("Read six pages and answer.")
    second = agent.run("Read six more.", messages=first.messages)
    assert second.outcome == "completed"
    assert all(request_tokens(r["messages"], r["tools"]) <= WINDOW for r in model.requests)
    assert len(second.messages) > len(first.messages)


def test_a_stub_names_a_path_the_workspace_file_tools_read_back(tmp_path):
    from harness import Workspace

    ws = Workspace(tmp_path)
    (tmp_path / "big.txt").write_text("line of the log\n" * 400, encoding="utf-8")
    reads = [tool_call("read_file", path="big.txt") for _ in range(6)]

    def read_the_stub(messages: list[dict]) -> dict:
        stub = next(str(m["content"]) for m in messages if "[compacted" in str(m["content"]))
        return tool_call("read_file", path=stub.split('read_file("')[1].split('")')[0])

    model = ScriptedModel([*reads, read_the_stub, say("ok")])
    result = Agent(model, ws.tools, context_window=WINDOW, offload_dir="context",
                   summary_model=summariser()).run("Read the log.")
    assert result.outcome == "completed"
    read_back = result.messages[-2]["content"]
    assert read_back == (tmp_path / "big.txt").read_text(encoding="utf-8")


def test_a_call_id_never_becomes_a_path_outside_the_offload_folder(tmp_path):
    ids = [f"../../escape{i}" for i in range(6)]
    model = ScriptedModel([*(tool_call("fetch", id=i, n=n) for n, i in enumerate(ids)),
                           say("ok")])
    Agent(model, [fetch], context_window=WINDOW, offload_dir=str(tmp_path / "context"),
          summary_model=summariser()).run("go")
    written = sorted(p.name for p in (tmp_path / "context").iterdir())
    assert written and all(".." not in name and "/" not in name for name in written)
    assert not list(tmp_path.parent.glob("escape*"))


def test_a_sub_agent_compacts_against_its_own_window():
    child_steps = [tool_call("fetch", n=i) for i in range(6)] + [say("Six pages, all lorem.")]
    model = ScriptedModel([tool_call("delegate_task", task="Read six pages and sum them up."),
                           *child_steps, say("Done.")])
    result = Agent(model, [fetch], subagents=True, subagent_tools=("fetch",), max_turns=5,
                   subagent_max_turns=10, context_window=WINDOW,
                   summary_model=summariser()).run("Delegate the reading.")
    assert result.outcome == "completed"
    assert [e.depth for e in result.events if e.type == "compaction"], "the child never compacted"
    assert all(e.depth == 1 for e in result.events if e.type == "compaction")
    assert all(request_tokens(r["messages"], r["tools"]) <= WINDOW for r in model.requests)


def test_a_summary_request_spends_the_runs_request_budget():
    plain, model, summary = run()
    assert plain.outcome == "completed" and summary.requests
    main_requests = len(model.requests)
    needed = main_requests + len(summary.requests)
    exact, _, _ = run(max_requests=needed)
    assert exact.outcome == "completed"  # the summaries fit when they are counted
    short, _, _ = run(max_requests=needed - 1)
    assert short.outcome == "request_limit"  # before, the summaries were free


def test_a_summary_request_spends_the_runs_input_tokens():
    plain = run()[0]
    summaries = [e.usage["prompt_tokens"] for e in plain.events
                 if e.type == "model_reply" and e.get("purpose") == "summary"]
    main = sum(e.usage["prompt_tokens"] for e in plain.events
               if e.type == "model_reply" and e.get("purpose") != "summary")
    assert summaries
    budget = main + sum(summaries)
    assert run(max_input_tokens=budget + 50)[0].outcome == "completed"
    assert run(max_input_tokens=main + 10)[0].outcome == "token_limit"


def test_what_each_request_sent_is_rebuilt_from_the_result_even_after_save_and_load(tmp_path):
    result, model, _ = run()
    assert any(e.get("sent") is not None for e in result.events if e.type == "model_request")
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    for run_result in (result, loaded):
        for n, request in enumerate(model.requests, 1):
            assert run_result.sent(n) == request["messages"], f"request {n}"


def test_an_unshaped_request_records_no_copy_of_the_transcript():
    model = ScriptedModel([say("hello")])
    result = Agent(model).run("hi")
    [asked] = [e for e in result.events if e.type == "model_request"]
    assert asked.get("sent") is None and result.sent(1) == model.requests[0]["messages"]


def test_a_shaped_request_records_the_transcripts_messages_themselves_not_copies(tmp_path):
    result = run()[0]
    shaped = [e.sent for e in result.events if e.type == "model_request" and e.get("sent")]
    assert shaped, "no request was shaped: the test proves nothing"
    kept = {id(m) for m in result.messages}
    assert all(id(m) in kept for sent in shaped for m in sent if m.get("role") == "assistant")
    data = json.loads(result.save(tmp_path / "run.json").read_text(encoding="utf-8"))
    recorded = [e["sent"] for e in data["events"] if e.get("sent")]
    indices = [m for sent in recorded for m in sent if isinstance(m, int)]
    assert len(indices) > len(recorded)  # on disk: the transcript's index, not a copy
