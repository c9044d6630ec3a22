"""Record a run, save it, load it back, and replay it offline with the tools running again."""

from __future__ import annotations

import datetime
import json

from harness import Agent, RunResult, ScriptedModel, say, tool, tool_call

TASK = "Résumé: note 'café 你好', then answer"
PLAN = {"todos": [{"content": "Note it", "status": "completed"}]}


def noting_tool(calls: list, path) -> object:
    """A tool that counts its calls and writes a file, to prove it ran again."""

    @tool
    def note(text: str) -> str:
        """Write a note to disk."""
        calls.append(text)
        path.write_text(text, encoding="utf-8")
        return f"noted {text}"

    return note


def recorded_run(tmp_path, calls: list, **step_extra) -> RunResult:
    model = ScriptedModel([
        {**tool_call("todo_write", PLAN, id="t1"), **step_extra},
        {**tool_call("note", text="café 你好", id="c1"), **step_extra},
        {**say("Noted: café 你好."), **step_extra},
    ])
    agent = Agent(model, [noting_tool(calls, tmp_path / "note.txt")], planning=True)
    return agent.run(TASK)


def replay(source, tmp_path, calls: list, **agent_kwargs) -> tuple[RunResult, ScriptedModel]:
    model = ScriptedModel.from_run(source)
    agent = Agent(model, [noting_tool(calls, tmp_path / "note.txt")], **agent_kwargs)
    return agent.run(TASK), model


# -- save and load --------------------------------------------------------------------------

def test_saved_run_is_utf8_json_with_non_ascii_text_as_is(tmp_path):
    path = recorded_run(tmp_path, []).save(tmp_path / "run.json")
    text = path.read_bytes().decode("utf-8")
    assert "café 你好" in text
    assert "\\u" not in text
    assert json.loads(text)["outcome"] == "completed"


def test_loaded_run_equals_the_original(tmp_path):
    original = recorded_run(tmp_path, [])
    loaded = RunResult.load(original.save(tmp_path / "run.json"))
    assert loaded.outcome == original.outcome == "completed"
    assert loaded.final == original.final
    assert loaded.messages == original.messages
    assert loaded.usage == original.usage
    assert loaded.plan == original.plan and loaded.plan_text() == "[x] Note it"
    assert [e.type for e in loaded.events] == [e.type for e in original.events]
    assert loaded.events == original.events


def test_run_that_ended_early_saves_and_loads_with_its_error(tmp_path):
    original = Agent(ScriptedModel([])).run("go")
    loaded = RunResult.load(original.save(tmp_path / "run.json"))
    assert (loaded.outcome, loaded.error) == ("model_error", original.error)
    assert loaded.messages == original.messages


def test_run_with_non_json_argument_types_saves(tmp_path):
    @tool
    def weekday(day: datetime.date) -> str:
        """Name the weekday of a date."""
        return day.strftime("%A")

    model = ScriptedModel([tool_call("weekday", day="2024-05-01", id="c1"), say("Wednesday")])
    result = Agent(model, [weekday]).run("Which day?")
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    assert loaded.messages == result.messages
    called = next(e for e in loaded.events if e.type == "tool_call")
    assert called.arguments == {"day": "2024-05-01"}


# -- replay ---------------------------------------------------------------------------------

def test_replay_from_a_result_runs_the_tools_again_and_gives_the_same_messages(tmp_path):
    calls = []
    original = recorded_run(tmp_path, calls)
    (tmp_path / "note.txt").unlink()
    replayed, model = replay(original, tmp_path, calls, planning=True)
    assert calls == ["café 你好", "café 你好"]
    assert (tmp_path / "note.txt").read_text(encoding="utf-8") == "café 你好"
    assert replayed.messages == original.messages
    assert replayed.outcome == "completed" and model.remaining == 0


def test_replay_from_a_saved_file_gives_the_same_messages(tmp_path):
    calls = []
    path = recorded_run(tmp_path, calls).save(tmp_path / "run.json")
    (tmp_path / "note.txt").unlink()
    replayed, _ = replay(path, tmp_path, calls, planning=True)
    assert len(calls) == 2
    assert (tmp_path / "note.txt").exists()
    assert replayed.messages == RunResult.load(path).messages


def test_replay_accepts_the_path_as_a_string(tmp_path):
    path = recorded_run(tmp_path, []).save(tmp_path / "run.json")
    assert len(ScriptedModel.from_run(str(path)).steps) == 3


def test_replay_includes_subagent_replies_in_request_order(tmp_path):
    looked_up = []

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        looked_up.append(key)
        return f"{key}=42"

    def agent(model: ScriptedModel) -> Agent:
        return Agent(model, [lookup], subagents=True, subagent_tools=["lookup"])

    recording = ScriptedModel([
        tool_call("delegate_task", task="Find the answer key", id="d1"),
        tool_call("lookup", key="answer", id="s1"),  # the sub-agent's requests ...
        say("answer=42"),                            # ... share the model object
        say("The answer is 42."),
    ])
    original = agent(recording).run("What is the answer?")
    model = ScriptedModel.from_run(original)
    replayed = agent(model).run("What is the answer?")
    assert [s.get("content") for s in model.steps] == [None, None, "answer=42",
                                                       "The answer is 42."]
    assert looked_up == ["answer", "answer"]
    assert replayed.messages == original.messages
    assert [r["messages"] for r in model.requests] == [r["messages"] for r in recording.requests]
    assert replayed.delegations[0].answer == "answer=42"


def test_replay_uses_the_recorded_real_usage(tmp_path):
    usage = {"prompt_tokens": 50, "completion_tokens": 5}
    original = recorded_run(tmp_path, [], usage=usage)
    replayed, _ = replay(original, tmp_path, [], planning=True)
    assert original.usage == {"prompt_tokens": 150, "completion_tokens": 15,
                              "total_tokens": 165, "estimated": False}
    assert replayed.usage == original.usage


def test_replay_does_not_copy_estimated_usage(tmp_path):
    original = recorded_run(tmp_path, [])
    model = ScriptedModel.from_run(original)
    assert original.usage["estimated"] is True
    assert all("usage" not in s for s in model.steps)
    replayed, _ = replay(original, tmp_path, [], planning=True)
    assert replayed.usage["estimated"] is True
