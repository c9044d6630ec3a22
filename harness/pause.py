"""A run that waits for a person: a call that needs a yes ends the run, and the run goes
on later, in this process or another, with the person's answers.

    agent = Agent(model, tools, permissions=Permissions({"refund": "ask"}, approve="pause"))
    paused = agent.run("Refund ORD-1002")       # outcome "awaiting_approval"
    paused.pending                              # [{"id", "tool_name", "arguments",
    paused.save("run.json")                     #   "agent_id", "depth"}]
    ...                                         # hours later, a new process, a new Agent:
    agent.resume(RunResult.load("run.json"), approvals={"call_2_0": True})

When a call's rule is ``ask`` and the approver is ``"pause"`` (calls.py), the call is
not run and gets no answer yet; the round's other calls are answered as usual, then the
run ends ``awaiting_approval`` with the waiting calls in ``result.pending``. `resume`
goes on from the transcript, the plan, the budget spent and the turns taken: an approved
call runs down the one call path (its hooks, the call log, the budget), a refused one is
answered with a refusal the model reads, each answer in its place in the round, and the
loop goes on. It may pause again. An answer for a call that is not waiting is refused.
"""

from __future__ import annotations

from typing import Any

from .control import Budget, RunControl
from .extend import service
from .loop import Run
from .outcomes import RunOver
from .rounds import not_run, play
from .result import RunResult


def resume(agent: Any, result: RunResult, approvals: dict[str, bool], *,
           call_log: Any = None, output: Any = None) -> RunResult:
    """``result`` (a run that ended ``awaiting_approval``) gone on with ``approvals``:
    ``{call_id: True | False}``, one for each call in ``result.pending``; ``call_log``:
    the run's (lesson 11), whose intents and results go on too; ``output``: the shape
    its answer must have, as ``run(output=...)`` (harness/answers/)."""
    _check(result, approvals)
    s = agent.settings
    budget = Budget(s.max_requests, s.max_tool_calls, s.max_input_tokens)
    budget.used.update(spent(result))
    control = RunControl.start(s.max_turns, s.max_seconds, None, budget)
    control.turns = result.turns
    if control.deadline is not None:  # a hung step cannot hold it (harness/waiting/)
        control = service("waiting").from_control(control)
    return Resumed(agent, control, plan=list(result.plan), call_log=call_log,
                   output=output).go_on(result, dict(approvals))


def spent(result: RunResult) -> dict[str, int]:
    """What ``result`` spent of a budget: requests, tool calls that ran, input tokens."""
    ran = sum(e.type == "tool_result" and bool(e.get("ran")) for e in result.events)
    return {"requests": result.requests, "tool_calls": ran,
            "input_tokens": int(result.usage.get("prompt_tokens", 0))}


def _check(result: RunResult, approvals: dict[str, bool]) -> None:
    waiting = {p["id"]: p for p in result.pending}
    if result.outcome != "awaiting_approval" or not waiting:
        raise ValueError(f"this run ended {result.outcome!r}: there is nothing to approve "
                         "(resume a run whose outcome is 'awaiting_approval')")
    if not isinstance(approvals, dict):
        raise TypeError("approvals is a dict {call_id: True or False}")
    if stale := sorted(set(approvals) - set(waiting)):
        raise ValueError(f"call {stale[0]!r} is not waiting for approval; the calls waiting "
                         f"are {sorted(waiting)}")
    if missing := sorted(set(waiting) - set(approvals)):
        raise ValueError(f"no answer for {missing}: give True or False for every call in "
                         "result.pending")
    if wrong := [k for k, v in approvals.items() if not isinstance(v, bool)]:
        raise ValueError(f"the answer for {wrong[0]!r} is {approvals[wrong[0]]!r}; give True "
                         "(run it) or False (refuse it)")


class Resumed(Run):
    """A run that starts where a paused one stopped: its transcript, its events, the
    answers to its waiting calls; then the loop as always."""

    def go_on(self, paused: RunResult, approvals: dict[str, bool]) -> RunResult:
        self.paused, self.events = paused, list(paused.events)  # the record goes on
        self.calls.decided.update(approvals)
        self.control.turns = paused.turns
        self.door.asked["paused"] = paused  # its delegations, a waiting sub-agent's state
        for e in paused.events:  # the calls that ran, by tool: a new delegation's number
            if e.type == "tool_result" and e.get("ran") and e.agent_id == self.agent_id:
                self.calls.runs[e.tool_name] = self.calls.runs.get(e.tool_name, 0) + 1
        task = next(m["content"] for m in paused.messages if m["role"] == "user")
        return self.execute(task)

    def loop(self) -> None:
        self.messages[:] = [dict(m) for m in self.paused.messages]  # the transcript itself
        answered = {m.get("tool_call_id") for m in self.messages}
        reply = next(m for m in reversed(self.messages) if m.get("tool_calls"))
        waiting = [c for c in reply["tool_calls"] if c["id"] not in answered]  # paused, or a
        self.calls.used_ids |= {c["id"] for m in self.messages  # delegation that waits
                                for c in m.get("tool_calls") or ()} - {c["id"] for c in waiting}
        try:  # in the model's order, down the one path, as a round (a sub-agent resumes)
            for call, ended in play(self.calls, self.control, waiting):
                place(self.messages, call["id"], ended.result.output)
                for mechanism in self.mechanisms:
                    self.note(mechanism.after_call(ended))
        except (RunOver, KeyboardInterrupt) as stop:  # each call still gets its one answer
            for message in not_run(waiting, self.messages, stop):
                place(self.messages, message["tool_call_id"], message["content"])
            raise
        super().loop()


def child_paused(paused: Any, parent: Run) -> tuple[RunResult, dict[str, bool]]:
    """A sub-agent that waited (its `Delegation`, its events in ``parent``'s record) as the
    paused run it was, and the person's answers to its calls (given to ``parent``)."""
    state = paused.paused
    events = [e for e in parent.events if e.agent_id == paused.child_id]
    result = RunResult("awaiting_approval", None, [dict(m) for m in state["messages"]], events,
                       turns=state["turns"], pending=list(state["pending"]))
    return result, {p["id"]: parent.calls.decided.pop(p["id"]) for p in state["pending"]}


def place(messages: list[dict], call_id: str, content: str) -> None:
    """Answer ``call_id`` among its round's answers, in the order the model made the calls."""
    at = next(i for i, m in enumerate(messages)
              if any(c["id"] == call_id for c in m.get("tool_calls") or ()))
    order = [c["id"] for c in messages[at]["tool_calls"]]
    end = at + 1
    while (end < len(messages) and messages[end]["role"] == "tool"
           and order.index(messages[end]["tool_call_id"]) < order.index(call_id)):
        end += 1
    messages.insert(end, {"role": "tool", "tool_call_id": call_id, "content": content})
