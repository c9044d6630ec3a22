"""The plan panel: its text, its live widget traits, and the runs it must survive.

Every scenario drives a real `Agent` on a `ScriptedModel`; the panel only sees events.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time

import pytest

from harness import Agent, Event, Permissions, ScriptedModel, say, tool, tool_call
from harness.ui import PanelState, PlanPanel, format_event
from harness.ui.throttle import Throttle

ITEMS = ["Add up the March sales", "Report the total"]
TASK = "Add up the March sales (120, 340, 95.5) and report the total"


@tool
def add_numbers(numbers: list[float]) -> float:
    """Add up a list of numbers."""
    return sum(numbers)


def call(call_id: str, name: str, **arguments) -> dict:
    return {"tool_calls": [{"id": call_id, "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)}}]}


def plan(call_id: str, *statuses: str, items: list[str] = ITEMS) -> dict:
    todos = [{"content": c, "status": s} for c, s in zip(items, statuses, strict=True)]
    return call(call_id, "todo_write", todos=todos)


def with_usage(step: dict, prompt: int, completion: int) -> dict:
    return {**step, "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


def full_script() -> list[dict]:
    """Plan, a tool, a delegation, a reminder, the stop gate, then a finished plan."""
    return [
        with_usage(plan("c1", "in_progress", "pending"), 100, 10),
        with_usage(call("c2", "add_numbers", numbers=[120, 340, 95.5]), 200, 10),
        with_usage(call("c3", "delegate_task", task="Add up 1, 2 and 3 with add_numbers"), 300, 10),
        with_usage(call("s1", "add_numbers", numbers=[1, 2, 3]), 50, 5),   # the sub-agent
        with_usage({"content": "The sum is 6."}, 60, 5),                   # the sub-agent
        with_usage(plan("c4", "completed", "in_progress"), 400, 10),
        with_usage({"content": "Done."}, 500, 10),                         # stop gate pushes back
        with_usage(plan("c5", "completed", "completed"), 600, 10),
        with_usage({"content": "The March total is 555.5."}, 700, 10),
    ]


def run_agent(observer, script: list, tools=(add_numbers,), task: str = TASK, **options):
    options = {"planning": True, "subagents": True, "subagent_tools": ["add_numbers"],
               "reminder_after": 2, **options}
    agent = Agent(ScriptedModel(script), list(tools), observers=[observer], **options)
    return agent.run(task)


@pytest.fixture(scope="module")
def finished() -> tuple[PlanPanel, object]:
    panel = PlanPanel()
    return panel, run_agent(panel, full_script())


def test_finished_run_shows_every_item_done_and_the_outcome(finished):
    panel, result = finished
    text = panel.text()
    assert result.outcome == "completed"
    assert text.splitlines()[0] == "Agent plan: completed"
    assert "  [x] Add up the March sales\n  [x] Report the total\n" in text
    assert "Progress: 2/2 done [##########]" in text
    assert ('Outcome: completed after 7 turns (9 requests with sub-agents) — '
            '"The March total is 555.5."') in text


def test_last_change_names_the_status_change_of_the_last_update(finished):
    panel, _ = finished
    assert 'Last change: "Report the total" [>] → [x]' in panel.text()


def test_usage_counts_tokens_per_delegation_and_the_last_context(finished):
    panel, result = finished
    lines = panel.text().splitlines()
    assert result.usage["total_tokens"] == 2_990  # the sub-agent's 120 rolled up
    assert lines[-6:-1] == [
        "Model: scripted",
        "Tokens: 710 last request, 2,990 this run",
        "  main agent 2,870",
        '  └─ main.sub1 120: completed, 1 tool call, "Add up 1, 2 and 3 with add_numbers"',
        "Context: 700 tokens, last request (main)",
    ]


def test_budget_line_counts_what_the_run_budget_counts_against_its_limits(finished):
    panel, result = finished
    requests = sum(e.type == "model_request" for e in result.events)  # sub-agent's too
    ran = sum(e.type == "tool_result" and e.ran for e in result.events)
    prompt = sum(e.usage["prompt_tokens"] for e in result.events if e.type == "model_reply")
    assert (requests, ran) == (9, 6)
    assert panel.text().splitlines()[-1] == (
        f"Budget: {requests}/50 requests, {ran}/100 tool calls, {prompt:,} input tokens")


def test_budget_stops_the_run_where_the_panel_says_it_is_used_up():
    panel = PlanPanel()
    result = run_agent(panel, full_script(), max_requests=5)
    assert result.outcome == "request_limit"
    assert panel.text().splitlines()[-1].startswith("Budget: 5/5 requests, ")


def test_context_is_shown_against_the_models_window_when_it_is_known():
    state = PanelState()
    model = ScriptedModel(full_script())
    model.model, model.context_window = "local-7b", 8_000
    Agent(model, [add_numbers], observers=[state], planning=True, subagents=True,
          subagent_tools=["add_numbers"]).run(TASK)
    text = state.text()
    assert "Model: local-7b" in text
    assert "Context: 700 tokens of 8,000 (9%), last request (main)" in text


def test_log_shows_delegation_reminder_stop_gate_and_tool_results(finished):
    panel, _ = finished
    log = panel.text().split("Log:\n")[1].split("\nModel:")[0].splitlines()
    assert log == [
        "    ✓ add_numbers: 6.0",
        "  ↳ main.sub1 completed: 1 tool call, 120 tokens",
        "  ✓ delegate_task: The sum is 6.",
        "  ↻ reminder: plan not updated for 2 tool rounds",
        "  ✓ todo_write: Plan updated (1/2 done)",
        "  ↩ stop gate: answered with 1 open item, pushed back",
        "  ✓ todo_write: Plan updated (2/2 done)",
        "  ■ completed after 7 turns",
    ]


def test_widget_traits_change_while_the_run_executes():
    panel = PlanPanel(interval=0)  # a redraw after every event (see the throttle tests)
    plans, bars = [], []
    panel.plan.observe(lambda change: plans.append(change["new"]), names="value")
    panel.bar.observe(lambda change: bars.append(change["new"]), names="value")
    run_agent(panel, full_script())
    assert any("[&gt;] Add up the March sales" in value for value in plans[:-1])
    assert bars == [1, 2]
    assert panel.bar.bar_style == "success"


def test_each_plan_update_reports_what_it_added_removed_and_changed():
    state, seen = PanelState(), []

    def watch(event: Event) -> None:
        state.on_event(event)
        if event.type == "plan_update":
            seen.append(state.change_text())

    script = [plan("c1", "in_progress", "pending"),
              plan("c2", "in_progress", "pending"),
              plan("c3", "completed", "in_progress", items=[ITEMS[0], "Check the sum"]),
              plan("c4", "completed", "completed", items=[ITEMS[0], "Check the sum"]),
              {"content": "555.5"}]
    run_agent(watch, script)
    assert seen == [
        'added "Add up the March sales", "Report the total"',
        "nothing (the same plan was sent again)",
        'added "Check the sum"; removed "Report the total"; "Add up the March sales" [>] → [x]',
        '"Check the sum" [>] → [x]',
    ]


def test_current_step_follows_model_tool_approval_and_sub_agent():
    state, steps = PanelState(), []

    @tool
    def look(what: str) -> str:
        """Report what the panel says right now."""
        steps.append(state.step_text())
        return "seen"

    def approve(name: str, arguments: dict) -> bool:
        steps.append(state.step_text())
        return True

    def reply(messages: list) -> dict:
        steps.append(state.step_text())
        return {"content": "ok"}

    script = [call("c1", "look", what="top"), call("c2", "delegate_task", task="Look inside"),
              call("s1", "look", what="inside"), reply, plan("c3", "completed", "completed"),
              reply]
    run_agent(state.on_event, script, tools=[look], subagent_tools=["look"],
              permissions=Permissions({"look": "ask"}, default="allow", approve=approve))
    assert steps == [
        "main: waiting for approval: look", "main: running tool look",
        "main.sub1: waiting for approval: look", "main.sub1: running tool look",
        "main.sub1: model thinking (turn 2)", "main: model thinking (turn 4)",
    ]
    assert state.step_text() == ""


def test_interrupted_run_shows_cancelled_and_keeps_the_plan():
    @tool
    def slow_sum(numbers: list[float]) -> float:
        """Add up numbers, slowly."""
        raise KeyboardInterrupt

    panel = PlanPanel()
    script = [plan("c1", "in_progress", "pending"), call("c2", "slow_sum", numbers=[1, 2])]
    result = run_agent(panel, script, tools=[slow_sum], subagent_tools=[])
    text = panel.text()
    assert result.outcome == "cancelled"
    assert text.splitlines()[0] == "Agent plan: cancelled"
    assert "  [>] Add up the March sales\n  [ ] Report the total\n" in text
    assert ("Outcome: cancelled after 2 turns: interrupted (KeyboardInterrupt) "
            "— stopped at main: running tool slow_sum") in " ".join(text.split())
    assert "(~ = estimated)" in text  # the script gave no usage: the numbers are estimates


def test_a_new_run_replaces_the_previous_one():
    panel = PlanPanel()
    run_agent(panel, full_script())
    run_agent(panel, [plan("c1", "completed", items=["Say hello"]), {"content": "Hello"}],
              task="Greet the user")
    text = panel.text()
    assert "Task: Greet the user\n  [x] Say hello\nProgress: 1/1 done" in text
    assert "March" not in text and "main.sub1" not in text


def test_reset_shows_the_waiting_panel_again():
    panel = PlanPanel()
    run_agent(panel, full_script())
    panel.reset()
    assert panel.text() == "Agent plan: waiting for a run\n  (the plan is empty)"
    assert "(the plan is empty)" in panel.plan.value


def test_model_and_tool_text_is_escaped_in_the_widget():
    panel = PlanPanel()
    evil = "<script>alert(1)</script>"
    run_agent(panel, [plan("c1", "completed", items=[evil]), {"content": evil}])
    html = panel.plan.value + panel.details.value
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in panel.plan.value
    assert f"[x] {evil}" in panel.text()


def test_displayed_text_plain_is_the_panel_text_in_full():
    panel = PlanPanel()
    run_agent(panel, full_script())
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == panel.text() == repr(panel)
    assert len(bundle["text/plain"]) > 110  # ipywidgets would cut its own repr here
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_text_is_the_same_for_the_same_run():
    first, second = PanelState(), PanelState()
    run_agent(first, full_script())
    run_agent(second, full_script())
    assert first.text() == second.text()
    assert "0x" not in first.text() and "second" not in first.text()


def test_format_event_gives_one_line_for_interesting_events_only():
    failed = Event("tool_result", "main.sub1", 1, {"call_id": "c1", "tool_name": "add_numbers",
                                                   "ok": False, "status": "invalid_arguments",
                                                   "output": "Error: invalid arguments:\nmore"})
    assert format_event(failed) == "  ✗ add_numbers bad arguments: Error: invalid arguments"
    assert format_event(Event("model_request", data={"turn": 1})) is None


def test_log_line_of_json_output_shows_its_fields_not_a_bare_brace():
    result = Event("tool_result", data={"call_id": "c1", "tool_name": "read_file", "ok": True,
                                        "status": "ok", "output": '{\n  "order": "ORD-1002"\n}'})
    assert format_event(result) == '✓ read_file: { "order": "ORD-1002" }'


def test_importing_the_panel_does_not_import_ipywidgets():
    code = "import harness, harness.ui.panel, sys; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_plan_panel_without_ipywidgets_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    with pytest.raises(ImportError, match="pip install ipywidgets"):
        PlanPanel()
    state = PanelState()
    run_agent(state, [{"content": "Hi"}])
    assert state.text().startswith("Agent plan: completed")


def test_panel_text_lines_fit_a_notebook_output():
    panel = PlanPanel()
    long_task = "Add up the March sales (120, 340, 95.5) and report the total " * 4
    run_agent(panel, [plan("c1", "in_progress", "pending")], task=long_task)
    assert max(len(line) for line in panel.text().splitlines()) <= 96


# -- issue 10: the reply as it is written, and redraws coalesced -------------------------

def snapshots(script: list, tools=(), **model) -> tuple[list[str], PanelState]:
    """The panel's text after every streamed piece, and the panel at the end."""
    state, seen = PanelState(), []

    def watch(event: Event) -> None:
        state.on_event(event)
        if event.type == "model_delta":
            seen.append(state.text())

    Agent(ScriptedModel(script, stream=True, **model), list(tools),
          observers=[watch]).run("Add 2 and 3")
    return seen, state


def test_the_answer_shows_as_it_is_written_and_goes_when_it_is_complete():
    seen, state = snapshots([say("The sum of 2 and 3 is 5.")])
    assert "Answer so far: The sum of " in seen[3]
    assert "Now: main: model writing its answer" in seen[3]
    assert "Answer so far: The sum of 2 and 3 is 5." in seen[-1]
    assert "Answer so far" not in state.text()  # the run is over: the outcome says it
    assert 'Outcome: completed after 1 turn — "The sum of 2 and 3 is 5."' in state.text()


def test_the_tail_of_the_reasoning_shows_while_the_model_thinks():
    thought = " ".join(f"step{i}" for i in range(60))
    seen, _ = snapshots([{**say("5"), "reasoning_content": thought}])
    assert "Thinking: …" + thought[-160:] in " ".join(seen[-2].split())  # wrapped to fit
    assert thought[:-170] not in seen[-2]
    assert "Now: main: model reasoning" in seen[-2]


def test_a_tool_call_being_written_shows_its_name_and_arguments():
    seen, _ = snapshots([tool_call("add", a=2, b=3), say("5")], tools=[add_numbers_2])
    assert any('Writing: add({"a": 2, "b"' in text for text in seen)


def test_arguments_being_written_read_as_text_not_as_json_escapes():
    @tool
    def save_note(text: str) -> str:
        """Save a note."""
        return "saved"

    note = 'Hello,\n\n- "For hygiene reasons" it stays.'
    seen, _ = snapshots([tool_call("save_note", text=note), say("Saved.")], tools=[save_note])
    writing = [line for text in seen for line in text.splitlines() if "Writing:" in line]
    assert any('Hello,⏎⏎- "For hygiene' in " ".join(w.split()) for w in writing), writing
    assert not any('\\"' in w or "\\n" in w for w in writing)


def test_the_live_reply_keeps_its_room_while_the_run_goes_and_gives_it_back_after():
    panel = PlanPanel()
    heights = []

    def watch(event: Event) -> None:
        if event.type in ("model_request", "tool_result", "run_end"):
            heights.append("min-height" in panel.live.value)

    Agent(ScriptedModel([tool_call("add", a=2, b=3), say("5")], stream=True),
          [add_numbers_2], observers=[panel, watch]).run("Add 2 and 3")
    panel._refresh()
    assert heights[:-1] == [True] * (len(heights) - 1)  # the room stays between requests
    assert "min-height" not in panel.live.value  # the run is over: nothing to keep room for


def test_a_reply_stopped_mid_stream_stays_on_the_panel_marked_stopped():
    cancel, panel = threading.Event(), PlanPanel()
    threading.Timer(0.15, cancel.set).start()
    model = ScriptedModel([say("alpha beta gamma delta epsilon zeta")], stream=True,
                          delay=0.05)
    Agent(model, observers=[panel]).run("Greek letters", cancel=cancel)
    text = panel.text()
    assert text.splitlines()[0] == "Agent plan: cancelled"
    assert "Answer so far (stopped): alpha beta" in text
    assert "alpha beta" in panel.live.value


def test_the_live_reply_is_escaped_in_the_widget():
    panel = PlanPanel(interval=0)
    cancel = threading.Event()
    evil = "<img src=x onerror=alert(1)>"

    def stop(event: Event) -> None:
        if event.type == "model_delta":
            cancel.set()

    Agent(ScriptedModel([say(evil)], stream=True), observers=[panel, stop]).run(
        "x", cancel=cancel)
    assert "<img" not in panel.live.value and "&lt;img" in panel.live.value


@tool
def add_numbers_2(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_a_burst_of_events_is_drawn_a_few_times_and_ends_on_the_final_state():
    panel = PlanPanel()
    result = run_agent(panel, full_script())
    assert result.outcome == "completed"
    assert panel.throttle.draws <= 3  # the first event, maybe one due, and the end
    assert "● completed" in panel.header.value
    assert (panel.bar.value, panel.bar.max) == (2, 2)
    assert "Outcome:</span> completed after 7 turns" in panel.details.value


def test_a_quiet_moment_gets_the_latest_state_drawn_without_another_event():
    panel, seen = PlanPanel(), []

    @tool
    def slow_sum(numbers: list[float]) -> float:
        """Add up numbers, slowly."""
        time.sleep(0.25)  # no event comes meanwhile: only the trailing redraw can show it
        seen.append(panel.details.value)
        return sum(numbers)

    run_agent(panel, [plan("c1", "in_progress", "pending"),
                      call("c2", "slow_sum", numbers=[1, 2]), {"content": "3"}],
              tools=[slow_sum], subagent_tools=[])
    assert "running tool slow_sum" in seen[0]


def test_throttle_draws_at_most_once_an_interval_and_once_after_the_last_request():
    stamps: list[float] = []
    throttle = Throttle(lambda: stamps.append(time.monotonic()), interval=0.05)
    started = time.monotonic()
    while time.monotonic() - started < 0.5:
        throttle.request()
        time.sleep(0.001)
    last_request = time.monotonic()
    time.sleep(0.1)
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert len(stamps) <= 0.5 / 0.05 + 2
    assert min(gaps) >= 0.045
    assert stamps[-1] >= last_request - 0.05  # the last change was drawn after it came


def test_a_panel_that_redraws_on_every_event_is_still_possible():
    panel = PlanPanel(interval=0)
    run_agent(panel, full_script())
    assert panel.throttle.draws >= 30
