"""Issue 17, the findings that land in the core: how an answer's finish_reason ends a run,
usage a provider fakes, a tool that runs an agent of its own, and a call log that cannot
write a string. (The stop hook's findings: tests/reliability/test_loop_hardening.py.)"""

from __future__ import annotations

import pytest

from harness import Agent, RunControl, ScriptedModel, say, tool, tool_call


@tool
def look(query: str) -> str:
    """Look something up."""
    return f"found {query} " * 50


@pytest.mark.parametrize(("finish", "outcome"), [("content_filter", "refused"),
                                                  ("max_tokens", "truncated"),
                                                  ("length", "truncated")])
def test_an_answer_the_provider_stopped_is_never_completed(finish, outcome):
    model = ScriptedModel([{**say("The answer is"), "finish_reason": finish}])
    result = Agent(model).run("go")
    assert (result.outcome, result.final) == (outcome, "The answer is")


@pytest.mark.parametrize("faked", [0, -5, float("nan"), "lots"])
def test_usage_faked_low_does_not_defeat_the_input_token_budget(faked):
    honest = Agent(ScriptedModel([tool_call("look", query=q) for q in "abcdef"] + [say("ok")]),
                   [look]).run("go")
    sizes = [e.usage["prompt_tokens"] for e in honest.events if e.type == "model_reply"]
    usage = {"prompt_tokens": faked, "completion_tokens": 1, "total_tokens": 1}
    script = [{**tool_call("look", query=q), "usage": usage} for q in "abcdef"] + [say("ok")]
    result = Agent(ScriptedModel(script), [look], max_input_tokens=sum(sizes[:3])).run("go")
    assert result.outcome == "token_limit"
    assert result.turns <= 3


def test_a_tool_that_runs_an_agent_within_the_run_spends_the_runs_budget():
    inner = Agent(ScriptedModel([say("inner answer")] * 5))

    @tool
    def ask_helper(question: str, control: RunControl) -> str:
        """Ask a helper agent, within this run's budget."""
        return inner.run(question, within=control).final or "(none)"

    model = ScriptedModel([tool_call("ask_helper", question=f"q{i}") for i in range(4)]
                          + [say("done")])
    result = Agent(model, [ask_helper], max_requests=4).run("go")
    assert result.outcome == "request_limit"  # 2 outer + 2 inner requests, then no more
    tool_messages = [m["content"] for m in result.messages if m["role"] == "tool"]
    assert tool_messages[:2] == ["inner answer", "inner answer"]


def test_a_call_log_that_cannot_encode_the_arguments_refuses_the_call_and_returns():
    class Picky:
        def on_event(self, event):
            pass

        def recorded(self, *args):
            return None

        def intent(self, agent_id, call_id, tool, arguments):
            "\udc80".encode()  # what a log that writes UTF-8 raises on a lone surrogate

        def result(self, *args):
            raise AssertionError("a call that was not logged must not run")

    ran = []

    @tool
    def act() -> str:
        """Act."""
        ran.append(1)
        return "done"

    result = Agent(ScriptedModel([tool_call("act"), say("ok")]), [act]).run(
        "go", call_log=Picky())
    assert (result.outcome, ran) == ("completed", [])
    assert result.messages[3]["content"].startswith("Not run: its intent could not be written")


def test_a_tool_that_runs_an_agent_without_saying_so_still_spends_the_runs_budget():
    inner = Agent(ScriptedModel([say("inner answer")] * 5))

    @tool
    def ask_helper(question: str) -> str:
        """Ask a helper agent (it knows nothing of the run it is in)."""
        return inner.run(question).final or "(none)"

    model = ScriptedModel([tool_call("ask_helper", question=f"q{i}") for i in range(4)]
                          + [say("done")])
    result = Agent(model, [ask_helper], max_requests=4).run("go")
    assert result.outcome == "request_limit"
    assert inner.run("outside any run").outcome == "completed"  # alone, it has its own


def test_a_call_log_that_cannot_write_a_result_warns_and_the_run_goes_on():
    """The call ran: a result the log cannot write is warned of (a resumed run reports that
    call unknown), and the run still returns everything, whatever object the log is."""
    class Full:
        def on_event(self, event):
            pass

        def recorded(self, *args):
            return None

        def intent(self, *args):
            pass

        def result(self, *args):
            raise OSError(28, "No space left on device")

    @tool
    def act() -> str:
        """Act."""
        return "done"

    with pytest.warns(RuntimeWarning, match="was not written"):
        result = Agent(ScriptedModel([tool_call("act"), say("ok")]), [act]).run(
            "go", call_log=Full())
    assert (result.outcome, result.messages[3]["content"]) == ("completed", "done")


def test_an_interrupt_after_a_call_ran_still_leaves_one_tool_message_per_call(monkeypatch):
    """Kernel -> Interrupt can land between a call's end and its tool message: the round is
    answered from the messages it holds, so no call is left without its answer."""
    from harness import loop

    real, hits = loop.Run.tool_message, []

    def interrupted_once(self, call, content):
        hits.append(call["id"])
        if len(hits) == 1:
            raise KeyboardInterrupt
        real(self, call, content)

    monkeypatch.setattr(loop.Run, "tool_message", interrupted_once)
    script = [{"role": "assistant", "content": None, "tool_calls": [
        tool_call("look", query="a", id="c1")["tool_calls"][0],
        tool_call("look", query="b", id="c2")["tool_calls"][0]]}]
    result = Agent(ScriptedModel(script), [look]).run("go")
    answers = [m["tool_call_id"] for m in result.messages if m["role"] == "tool"]
    assert result.outcome == "cancelled"
    assert answers == ["c1", "c2"]
