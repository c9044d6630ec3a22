"""Issue 16: the bugs fixed while harness/ was split into a core and sub-packages.

Each test states the fixed behaviour; each one failed on the flat layout before the move.
"""

from __future__ import annotations

import builtins
import json
import sys
import threading
import time

import pytest

from harness import (Agent, Event, Hooks, OpenAIModel, Permissions, ScriptedModel, TodoList,
                     say, tool, tool_call)
from harness.durable import CallLog
from harness.ui.panel import PanelState
from tests.fake_openai import FakeOpenAI, reply, streamed

KEY = "sk-test-issue16-0123456789"


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return "Returns are accepted within 30 days."


def delegating_script() -> list:
    """The top agent delegates; the sub-agent reads a file and answers; the top answers."""
    return [tool_call("delegate_task", task="Read docs/returns.md", id="d1"),
            tool_call("read_file", path="docs/returns.md", id="s1"),   # the sub-agent
            say("30 days."),                                           # the sub-agent
            say("Returns: 30 days.")]


def delegating_agent(model: ScriptedModel, **options) -> Agent:
    return Agent(model, [read_file], subagents=True, subagent_tools=("read_file",), **options)


# -- 1. @tool refuses what it cannot call, when the tool is made -------------------------

def test_tool_refuses_an_async_def_and_says_to_write_a_plain_def():
    with pytest.raises(TypeError) as caught:
        @tool
        async def fetch(url: str) -> str:
            """Fetch a page."""
            return url

    message = str(caught.value)
    assert "fetch" in message and "plain def" in message and "asyncio.run" in message


def test_tool_refuses_an_async_generator_too():
    with pytest.raises(TypeError, match="plain def"):
        @tool
        async def pages(url: str):
            """Yield pages."""
            yield url


@pytest.mark.parametrize("signature", ["*numbers: int", "**options: int"])
def test_tool_refuses_star_args_and_names_the_parameter(signature):
    namespace: dict = {}
    exec(f"def total({signature}) -> int:\n    '''Add.'''\n    return 0", namespace)
    name = signature.split(":")[0].lstrip("*")
    with pytest.raises(TypeError, match=rf"total.*\b{name}\b"):
        tool(namespace["total"])


# -- 2. a call log replays with ScriptedModel.from_run(CallLog(path)) -------------------

def test_a_completed_run_replays_from_its_call_log(tmp_path):
    path = tmp_path / "calls.jsonl"
    first = Agent(ScriptedModel([tool_call("read_file", path="docs/returns.md", id="c1"),
                                 say("Returns: 30 days.")]), [read_file])
    done = first.run("What is the return policy?", call_log=CallLog(path))
    assert done.outcome == "completed"

    model = ScriptedModel.from_run(CallLog(path))
    again = Agent(model, [read_file]).run("What is the return policy?")
    assert again.final == done.final == "Returns: 30 days."
    assert again.messages == done.messages
    assert model.remaining == 0


def test_a_crashed_run_replays_its_logged_replies_from_the_call_log(tmp_path):
    path = tmp_path / "calls.jsonl"

    @tool
    def note(text: str) -> str:
        """Write a note."""
        raise KeyboardInterrupt  # the person at the keyboard stops the run mid-call

    crashed = Agent(ScriptedModel([tool_call("note", text="first", id="c1"), say("never")]),
                    [note]).run("Take a note", call_log=CallLog(path))
    assert crashed.outcome == "cancelled"

    model = ScriptedModel.from_run(CallLog(path))
    assert model.remaining == 1  # the one reply the crashed run received

    @tool(name="note")
    def note_again(text: str) -> str:
        """Write a note."""
        return "noted"

    replay = Agent(model, [note_again]).run("Take a note")
    [call] = [e for e in replay.events if e.type == "tool_call"]
    assert (call.call_id, call.tool_name, call.arguments) == ("c1", "note", {"text": "first"})


def test_from_run_given_a_call_log_path_says_to_wrap_it_in_a_calllog(tmp_path):
    path = tmp_path / "calls.jsonl"
    Agent(ScriptedModel([tool_call("read_file", path="a", id="c1"), say("ok")]),
          [read_file]).run("go", call_log=CallLog(path))
    with pytest.raises(ValueError) as caught:
        ScriptedModel.from_run(path)
    assert not isinstance(caught.value, json.JSONDecodeError)
    assert "ScriptedModel.from_run(CallLog(path))" in str(caught.value)


# -- 3. doctor: what harness/ needs, apart from what the course adds --------------------

def test_doctor_is_ready_with_only_pydantic_and_openai(monkeypatch, capsys):
    import harness.ui.doctor as doctor_module

    installed = {"pydantic": "2.14.4", "openai": "3.57.0"}
    monkeypatch.setattr(doctor_module, "_version", installed.get)
    monkeypatch.delenv("HARNESS_MODEL", raising=False)
    report = doctor_module.doctor()
    lines = capsys.readouterr().out.splitlines()

    assert lines[-1] == "ready"
    assert report["packages"] == {"pydantic": "2.14.4", "openai": "3.57.0", "ipywidgets": None}
    assert report["course"] == {"jupyterlab": None, "nbval": None, "pytest": None}
    assert {"python", "model", "endpoint", "api_key_set", "sandbox"} <= set(report)
    widgets = next(line for line in lines if line.strip().startswith("ipywidgets"))
    assert "needed for the plan panel" in widgets and "requirements.txt" not in widgets
    # only the course's own line sends people to requirements.txt, and says what for
    told = [line for line in lines if "requirements.txt" in line]
    assert told and all("course" in line for line in told)
    assert all(len(line) <= 96 for line in lines)


def test_doctor_says_openai_is_needed_for_openaimodel(monkeypatch, capsys):
    import harness.ui.doctor as doctor_module

    monkeypatch.setattr(doctor_module, "_version", {"pydantic": "2.14.4"}.get)
    monkeypatch.delenv("HARNESS_MODEL", raising=False)
    doctor_module.doctor()
    lines = capsys.readouterr().out.splitlines()
    assert "needed for OpenAIModel" in next(x for x in lines if x.strip().startswith("openai"))
    assert lines[-1] == "ready"  # offline lessons need no openai

    monkeypatch.setenv("HARNESS_MODEL", "gpt-4o-mini")  # a live model does
    report = doctor_module.doctor(live=False)
    assert capsys.readouterr().out.splitlines()[-1].startswith("missing: openai")
    assert report["ready"] is False


# -- 4. a slow stream sends no heartbeat events, and still stops on cancel --------------

class Collect:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)


def test_a_slow_stream_reports_no_waiting_deltas_to_observers():
    seen = Collect()
    answer = "Returns are accepted within thirty days."
    with FakeOpenAI([streamed(reply(content=answer), interval=0.15)]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0)
        result = Agent(model, observers=[seen]).run("Return policy?")

    assert result.outcome == "completed" and result.final == answer
    deltas = [e for e in seen.events if e.type == "model_delta"]
    assert deltas and all(e.data["kind"] != "waiting" for e in deltas)
    assert [e.data["kind"] for e in deltas] == ["text"] * len(answer.split())


def test_cancel_during_a_silent_stream_still_stops_the_run_quickly():
    seen, cancel = Collect(), threading.Event()
    with FakeOpenAI([streamed(reply(content="one two three"), stall_after=1)]) as server:
        model = OpenAIModel("m", base_url=server.base_url, api_key=KEY, max_retries=0)
        cancelled_at: list[float] = []
        timer = threading.Timer(0.4, lambda: (cancelled_at.append(time.monotonic()),
                                              cancel.set()))
        timer.start()
        try:
            result = Agent(model, observers=[seen]).run("Hello", cancel=cancel)
            stopped = time.monotonic()
        finally:
            timer.cancel()
    assert result.outcome == "cancelled"
    assert cancelled_at and stopped - cancelled_at[0] < 1.0
    assert not [e for e in seen.events if e.type == "model_delta"
                and e.data["kind"] == "waiting"]


# -- 5. the sub-agent's system prompt -----------------------------------------------------

def test_subagent_system_setting_is_the_childs_system_message():
    model = ScriptedModel(delegating_script())
    delegating_agent(model, subagent_system="You are the CHILD.").run("Return policy?")
    child_first = model.requests[1]["messages"]
    assert child_first[0] == {"role": "system", "content": "You are the CHILD."}
    assert child_first[1] == {"role": "user", "content": "Read docs/returns.md"}


def test_patching_subagent_system_after_import_takes_effect(monkeypatch):
    monkeypatch.setattr("harness.subagent.SUBAGENT_SYSTEM", "PATCHED sub-agent prompt")
    model = ScriptedModel(delegating_script())
    delegating_agent(model).run("Return policy?")
    assert model.requests[1]["messages"][0] == {"role": "system",
                                                "content": "PATCHED sub-agent prompt"}


# -- 6. turns are the top agent's requests; requests count the sub-agents' too ----------

def test_turns_count_the_top_agents_requests_and_requests_count_every_one():
    result = delegating_agent(ScriptedModel(delegating_script())).run("Return policy?")
    assert result.outcome == "completed"
    assert result.turns == 2       # delegate_task, then the answer
    assert result.requests == 4    # and the sub-agent's two
    assert result.requests == sum(e.type == "model_request" for e in result.events)


def test_the_panel_outcome_counts_the_sub_agents_requests_too():
    state = PanelState()
    delegating_agent(ScriptedModel(delegating_script()), observers=[state]).run("Policy?")
    assert state.outcome_text() == ('completed after 2 turns (4 requests with sub-agents) '
                                    '— "Returns: 30 days."')


def test_the_panel_outcome_without_sub_agents_is_unchanged():
    state = PanelState()
    Agent(ScriptedModel([tool_call("read_file", path="a", id="c1"), say("Done.")]),
          [read_file], observers=[state]).run("Read a")
    assert state.outcome_text() == 'completed after 2 turns — "Done."'


# -- 7. Permissions decide a harness tool by name, Tool object or string ----------------

def test_permissions_answer_the_same_for_a_harness_tool_and_its_name():
    todo = TodoList().as_tool()
    table = Permissions({"read_file": "allow"}, default="deny")
    assert table.decide(todo) == table.decide("todo_write") == "allow"
    assert table.decide("delegate_task") == "allow"
    assert table.decide("write_file") == "deny"  # not a harness tool: the default


def test_a_table_that_names_todo_write_wins_for_the_tool_and_the_name():
    table = Permissions({"todo_write": "deny"}, default="allow")
    assert table.decide(TodoList().as_tool()) == table.decide("todo_write") == "deny"


# -- 8. a PlanPanel whose __init__ failed can still be shown -----------------------------

def test_repr_of_a_plan_panel_whose_init_failed_does_not_raise(monkeypatch):
    from harness.ui.widget import PlanPanel

    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # `import ipywidgets` fails
    panel = PlanPanel.__new__(PlanPanel)
    with pytest.raises(ImportError, match="ipywidgets"):
        panel.__init__()
    assert "PlanPanel" in repr(panel)


def test_repr_survives_an_import_hook_that_refuses_ipywidgets(monkeypatch):
    from harness.ui.widget import PlanPanel

    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "ipywidgets":
            raise ImportError("No module named 'ipywidgets'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "ipywidgets", raising=False)
    monkeypatch.setattr(builtins, "__import__", refuse)
    panel = PlanPanel.__new__(PlanPanel)
    with pytest.raises(ImportError):
        panel.__init__()
    monkeypatch.undo()
    assert isinstance(repr(panel), str)


# -- 9. hooks by event name; the old names are aliases -----------------------------------

@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return "written"


def hooked_run() -> dict[str, list[Event]]:
    """One run with a call that runs, one to an unknown tool, one denied, a delegation."""
    names = ("tool_call", "pre_tool_use", "tool_result", "post_tool_use", "run_start",
             "user_prompt_submit", "subagent_end", "subagent_stop")
    heard: dict[str, list[Event]] = {name: [] for name in names}
    hooks = Hooks()
    for name in names:
        hooks.on(name, heard[name].append)
    model = ScriptedModel([
        tool_call("read_file", path="a", id="ok1"),
        tool_call("no_such_tool", id="bad1"),
        tool_call("write_file", path="b", text="x", id="deny1"),
        tool_call("delegate_task", task="Read a", id="d1"),
        say("read."),                                  # the sub-agent
        say("All done."),
    ])
    permissions = Permissions({"read_file": "allow", "write_file": "deny"})
    result = Agent(model, [read_file, write_file], hooks=hooks, permissions=permissions,
                   subagents=True).run("Do things")
    assert result.outcome == "completed"
    return heard


def contents(events: list[Event]) -> list[dict]:
    """What each event says (a hook may be handed a copy, so not the object itself)."""
    return [e.to_dict() for e in events]


def test_an_event_name_and_its_alias_receive_the_same_events():
    heard = hooked_run()
    for name, alias in (("tool_call", "pre_tool_use"), ("run_start", "user_prompt_submit"),
                        ("subagent_end", "subagent_stop"), ("tool_result", "post_tool_use")):
        assert heard[name], name
        assert contents(heard[name]) == contents(heard[alias]), (name, alias)
    assert [e.call_id for e in heard["tool_call"]] == ["ok1", "bad1", "deny1", "d1"]
    assert [e.agent_id for e in heard["run_start"]] == ["main", "main.sub1"]
    assert [e.child_id for e in heard["subagent_end"]] == ["main.sub1"]


def test_post_tool_use_hears_every_result_as_tool_result_does_and_ran_tells_which_ran():
    heard = hooked_run()
    assert [e.call_id for e in heard["post_tool_use"]] == ["ok1", "bad1", "deny1", "d1"]
    assert [e.call_id for e in heard["post_tool_use"] if e.ran] == ["ok1", "d1"]


def test_a_tool_call_hook_that_returns_a_string_blocks_the_call():
    ran = []

    @tool
    def launch() -> str:
        """Has an effect."""
        ran.append(1)
        return "launched"

    hooks = Hooks()
    hooks.on("tool_call", lambda event: "Blocked: not today.")
    model = ScriptedModel([tool_call("launch", id="c1"), say("ok")])
    result = Agent(model, [launch], hooks=hooks).run("go")
    assert ran == []
    assert result.messages[3]["content"] == "Blocked: not today."


def test_an_unknown_hook_name_lists_the_valid_names():
    with pytest.raises(ValueError) as caught:
        Hooks().on("before_tool", print)
    message = str(caught.value)
    for name in ("tool_call", "tool_result", "run_start", "subagent_end", "stop",
                 "pre_tool_use", "post_tool_use", "user_prompt_submit", "subagent_stop"):
        assert name in message
