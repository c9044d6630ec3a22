"""Answers with a shape (issue 31, the Answer contract): ``agent.run(task, output=Model)``
validates the final answer, pushes back one that does not fit (bounded), then ends
``invalid_output``; ``result.output`` is the instance. `Findings` holds what it found to
the calls of the run that succeeded."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from harness import Agent, Hooks, OpenAIModel, RunResult, ScriptedModel, say, tool, tool_call
from harness.answers import PUSHBACKS, Findings
from tests.fake_openai import FakeOpenAI, reply

pytest_plugins = ("tests.fake_openai",)


@tool
def look(order_id: str) -> str:
    """Look an order up."""
    if order_id == "X":
        raise LookupError("no order X")
    return f"{order_id}: delivered"


class Total(BaseModel):
    order_id: str
    amount: int


def run(steps, output=Total, **kwargs) -> RunResult:
    return Agent(ScriptedModel(steps), [look], **kwargs).run("task", output=output)


def pushed_back(result: RunResult) -> list[str]:
    return [m["content"] for m in result.messages
            if m["role"] == "user" and m["content"].startswith("Your answer is not")]


def test_an_answer_in_json_text_that_fits_is_the_output():
    result = run([say('{"order_id": "A", "amount": 30}')])
    assert result.outcome == "completed"
    assert result.output == Total(order_id="A", amount=30)
    assert result.final == '{"order_id": "A", "amount": 30}'


def test_an_answer_in_a_json_fence_fits_too():
    result = run([say('```json\n{"order_id": "A", "amount": 30}\n```')])
    assert result.output == Total(order_id="A", amount=30)


def test_an_answer_that_does_not_fit_is_pushed_back_with_the_error_then_fixed():
    result = run([say('{"order_id": "A"}'), say("thirty"),
                  say('{"order_id": "A", "amount": 30}')])
    assert result.outcome == "completed" and result.output.amount == 30
    backs = pushed_back(result)
    assert len(backs) == 2
    assert "amount: Field required" in backs[0]
    assert "not JSON" in backs[1]
    assert [e.data["pushbacks"] for e in result.events if e.type == "answer_pushback"] == [1, 2]


def test_pushed_back_too_often_the_run_ends_invalid_output_with_the_last_answer():
    steps = [say(f'{{"order_id": "A", "amount": "n{i}"}}') for i in range(PUSHBACKS + 1)]
    result = run([*steps, say("never asked")])
    assert result.outcome == "invalid_output"
    assert result.output is None
    assert result.final == steps[-1]["content"]
    assert "amount" in result.error
    assert len(pushed_back(result)) == PUSHBACKS


def test_on_the_last_turn_an_answer_that_does_not_fit_is_not_pushed_back():
    result = run([say('{"order_id": "A"}'), say("never asked")], max_turns=1)
    assert result.outcome == "invalid_output" and result.requests == 1


def test_the_final_answer_tool_is_offered_with_the_models_fields_and_ends_the_run():
    model = ScriptedModel([tool_call("final_answer", order_id="A", amount=30),
                           say("never asked")])
    result = Agent(model, [look]).run("task", output=Total)
    offered = {t["function"]["name"]: t["function"] for t in model.requests[0]["tools"]}
    assert set(offered["final_answer"]["parameters"]["properties"]) == {"order_id", "amount"}
    assert result.outcome == "completed", result.error
    assert result.output == Total(order_id="A", amount=30)
    assert json.loads(result.final) == {"order_id": "A", "amount": 30}
    assert result.requests == 1


def test_a_final_answer_call_with_wrong_arguments_is_read_by_the_model_and_counted():
    steps = [tool_call("final_answer", order_id="A"),
             tool_call("final_answer", order_id="A", amount=30)]
    result = run(steps)
    assert result.outcome == "completed"
    refused = next(m["content"] for m in result.messages if m["role"] == "tool")
    assert "amount" in refused
    steps = [tool_call("final_answer", order_id="A")] * (PUSHBACKS + 1) + [say("x")]
    assert run(steps).outcome == "invalid_output"


def test_a_final_answer_goes_through_the_stop_hooks_like_a_text_answer():
    refused = []

    def stop(event):
        refused.append(event.data["final"])
        return "check the order first" if len(refused) == 1 else None

    steps = [tool_call("final_answer", order_id="A", amount=30),
             tool_call("look", order_id="A"),
             tool_call("final_answer", order_id="A", amount=30)]
    hooks = Hooks()
    hooks.on("stop", stop)
    result = run(steps, hooks=hooks)
    assert result.outcome == "completed", result.error
    assert len(refused) == 2 and result.requests == 3


def test_findings_cite_only_calls_of_the_run_that_succeeded():
    bad = {"found": [{"claim": "A was delivered", "sources": ["c9"]}]}
    failed = {"found": [{"claim": "X exists", "sources": ["c2"]}]}
    good = {"found": [{"claim": "A was delivered", "sources": ["c1"]}],
            "inferred": ["the refund is late"], "missing": ["X"]}
    steps = [tool_call("look", order_id="A", id="c1"), tool_call("look", order_id="X", id="c2"),
             say(json.dumps(bad)), say(json.dumps(failed)), tool_call("final_answer", **good)]
    result = run(steps, output=Findings)
    assert result.outcome == "completed", result.error
    backs = pushed_back(result)
    assert "'c9'" in backs[0] and "not a call of this run" in backs[0]
    assert "'c2'" in backs[1] and "did not succeed" in backs[1]
    assert result.output.found[0].sources == ["c1"] and result.output.missing == ["X"]


def test_findings_built_by_hand_are_not_checked_against_a_run():
    assert Findings(found=[{"claim": "c", "sources": ["any"]}]).found[0].claim == "c"


def test_output_is_none_unless_the_run_completed():
    result = run([tool_call("look", order_id="A")] * 3, max_turns=2)
    assert result.outcome == "turn_limit" and result.output is None


def test_output_must_be_a_pydantic_model_class():
    with pytest.raises(TypeError, match="pydantic model class"):
        run([say("{}")], output=dict)


def test_a_saved_run_keeps_its_output_as_data(tmp_path):
    result = run([say('{"order_id": "A", "amount": 30}')])
    loaded = RunResult.load(result.save(tmp_path / "run.json"))
    assert loaded.output == {"order_id": "A", "amount": 30}
    assert Total.model_validate(loaded.output) == result.output


def test_a_run_without_output_offers_no_final_answer_tool():
    model = ScriptedModel([say("hi")])
    Agent(model, [look]).run("task")
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["look"]


def test_openai_model_gets_the_final_answer_tool_and_its_call_is_the_output(
        fake_openai: FakeOpenAI) -> None:
    call = {"id": "fa1", "type": "function", "function": {
        "name": "final_answer", "arguments": '{"order_id": "A", "amount": 30}'}}
    fake_openai.add(reply(content=None, tool_calls=[call]))
    model = OpenAIModel(model="fake-model", base_url=fake_openai.base_url, api_key="sk-test")
    result = Agent(model, [look]).run("What does A cost?", output=Total)
    assert result.outcome == "completed", result.error
    assert result.output == Total(order_id="A", amount=30)
    sent = fake_openai.bodies[0]
    assert "final_answer" in [t["function"]["name"] for t in sent["tools"]]


def test_a_paused_run_resumed_with_output_gives_its_answer_the_same_shape():
    from harness import Permissions

    @tool(side_effects=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    perms = Permissions({"refund": "ask"}, approve="pause")
    steps = [tool_call("refund", order_id="A", id="r1"), say('{"order_id": "A"}'),
             say('{"order_id": "A", "amount": 30}')]
    paused = Agent(ScriptedModel(steps), [refund], permissions=perms).run("t", output=Total)
    assert paused.outcome == "awaiting_approval" and paused.output is None
    agent = Agent(ScriptedModel(steps[1:]), [refund], permissions=perms)
    done = agent.resume(paused, {"r1": True}, output=Total)
    assert done.outcome == "completed" and done.output == Total(order_id="A", amount=30)
    assert len(pushed_back(done)) == 1


def test_a_resumed_run_may_cite_the_calls_it_made_before_its_pause():
    from harness import Permissions

    @tool(side_effects=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    perms = Permissions({"look": "allow", "refund": "ask"}, approve="pause")
    found = {"found": [{"claim": "A delivered", "sources": ["c1"]},
                       {"claim": "A refunded", "sources": ["r1"]}]}
    steps = [tool_call("look", order_id="A", id="c1"), tool_call("refund", order_id="A", id="r1"),
             tool_call("final_answer", **found)]
    paused = Agent(ScriptedModel(steps), [look, refund], permissions=perms).run(
        "t", output=Findings)
    agent = Agent(ScriptedModel(steps[2:]), [look, refund], permissions=perms)
    done = agent.resume(paused, {"r1": True}, output=Findings)
    assert done.outcome == "completed", done.error
    assert [f.sources for f in done.output.found] == [["c1"], ["r1"]]


def test_findings_refuse_a_harness_tools_call_as_evidence_but_take_a_sub_agents_answer():
    todos = [{"content": "Look A up", "status": "completed"}]
    steps = [tool_call("todo_write", todos=todos, id="p1"),
             tool_call("delegate_task", task="look A up", id="d1"),
             tool_call("look", order_id="A", id="s1"), say("A: delivered"),
             tool_call("todo_write", todos=todos, id="p2"),  # forced after a delegation
             tool_call("final_answer", found=[{"claim": "A was delivered", "sources": ["p1"]}],
                       id="f1"),
             tool_call("final_answer", found=[{"claim": "A was delivered", "sources": ["d1"]}],
                       id="f2")]
    result = Agent(ScriptedModel(steps), [look], planning=True, subagents=True,
                   subagent_tools=["look"], reminder_after=99).run("task", output=Findings)
    assert result.outcome == "completed", result.error
    refused = [m["content"] for m in result.messages if m.get("tool_call_id") == "f1"]
    assert "harness's own tools" in refused[0]
    assert result.output.found[0].sources == ["d1"]
