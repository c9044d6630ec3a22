"""Durable runs on DBOS (lesson 15): a run that a crash does not lose, finished by another process.

    DBOS(config={"name": "shop", "system_database_url": "sqlite:///shop.sqlite"})
    durable = DBOSAgent(agent, name="shop")   # before DBOS.launch(): recovery looks it up
    DBOS.launch()                             # finishes the runs a crash left pending
    result = durable.run("Pay order A1", workflow_id="order-A1")

The whole run is one DBOS *workflow*; each model request and each tool call is a *step*,
whose result DBOS records in its database before the run goes on:

    workflow order-A1:  model | tool:look_up | model | intent:pay  tool:pay | model
                                                      (a call with side effects: two steps)

After a crash, a process that makes the same `DBOSAgent` (same name, same tools) and
launches DBOS runs the workflow again from the start: every recorded step is answered from
the record, in order, so the run is rebuilt as it was (the loop is deterministic given its
steps' results), and it goes on live from the first step that was never recorded. A
finished step never runs again. Nothing in the core changes: the agent's model and tools
are wrapped, and a `StepLog` sits on the call log seam of lesson 11 (`CallPath` asks its
``log`` about each call, and shows it each call's ``tool_call`` event).

**The call in flight at the crash.** Its step started and was never recorded, and DBOS
runs such a step again. Lesson 11 never retries an unknown result. The rule here:

    a read-only tool                        runs again (reading twice harms nobody)
    a tool with side effects, `idempotent`  runs again with the same `idempotency_key()`
                                            (workflow id + call id): the world acts once
    any other tool with side effects        not run again: status ``unknown``, and the
                                            model reads that it may have run

So a tool with side effects records its intent as a step of its own before it runs: an
intent with no result after it is a call that was in flight.

**A run that waits for a person.** With ``Permissions(rules, approve="pause")`` the
workflow does not end at a pause: it publishes the waiting calls (`DBOSAgent.pending`)
and waits (``DBOS.recv``, a recorded step) until `DBOSAgent.approve(workflow_id,
{call_id: True | False})` answers them from any process, even while no process runs the
run, then goes on (``agent.resume``). Start such a run with `DBOSAgent.start`.

What the workflow returns is the `RunResult` (DBOS pickles it: its default serializer);
``DBOS.retrieve_workflow(workflow_id).get_result()`` gives it in any process that imports
the harness, and ``result.to_dict()`` is its JSON. Limits, by design: a durable run's calls
run one at a time (DBOS numbers steps in the order they start); hooks and an approver
function must answer the same when a run is rebuilt (they are asked again, not recorded);
``max_seconds`` counts from each attempt's start; a ``summary_model`` of its own
(compaction) is asked outside the steps. After a resume the call path takes no call log
(giving it the `StepLog` changes the order of the steps a recovery replays), so a call left
unknown there is answered by its tool step (status ``error``, same words).
"""

from __future__ import annotations

import contextvars
import copy
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from typing import Any
from uuid import uuid4

try:
    from dbos import DBOS, SetWorkflowID
except ImportError as exc:  # the core imports without it; this module needs it
    raise ImportError("harness.durable.dbos needs the dbos package: pip install "
                      "'agent-harness-course[durable]' (or 'dbos>=3.4,<4')") from exc

from ..agent import Agent
from ..models import ModelError, ModelReply, ask
from ..result import RunResult
from ..scripted import ScriptedModel
from ..stack import Stack
from ..tools import Tool, ToolResult

UNKNOWN = ToolResult(False, "Unknown: it may have run; not retried. This call started before "
                     "the run stopped and its result was never recorded; it has side effects "
                     "and takes no idempotency key. Find out what it did before you try it "
                     "again.")
# The call about to run, from its tool_call event (StepLog.on_event): agent id, call id, args.
CALL: contextvars.ContextVar[tuple[str, str, Any] | None] = contextvars.ContextVar(
    "durable_call", default=None)
KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("idempotency_key", default=None)
PENDING, APPROVALS = "pending", "approvals"  # a paused run's event, and the answers' topic
WAIT = 24 * 3600  # seconds one wait for answers lasts (a recorded step), again and again


def idempotent(tool: Tool) -> Tool:
    """Mark a tool with side effects as safe to run again after a crash: it hands
    `idempotency_key()` to what it changes (a payment API's ``Idempotency-Key``), so a
    second call with the same key does nothing new.

        @idempotent
        @tool(side_effects=True)
        def pay(order: str, amount: int) -> str:
            return bank.charge(order, amount, key=idempotency_key())
    """
    if not isinstance(tool, Tool):
        raise TypeError(f"{tool!r} is not a Tool: put @idempotent above @tool")
    tool.idempotent = True
    return tool


def idempotency_key() -> str | None:
    """The key of the call running now in a durable run, the same in every attempt:
    ``<workflow id>:<call id>`` (a sub-agent's: ``<workflow id>:<agent id>:<call id>``).
    None outside a durable run."""
    return KEY.get()


class DBOSAgent:
    """``agent``'s runs as DBOS workflows named ``<name>.run``. Make it before
    ``DBOS.launch()``, in every process that may finish its runs (launch recovers them).

    ``ran`` and ``replayed`` count this process's steps by name (``"model"``,
    ``"tool:pay"``, ``"intent:pay"``): run for real, or answered from the record."""

    def __init__(self, agent: Agent, *, name: str) -> None:
        if not isinstance(agent, Agent):
            raise TypeError(f"DBOSAgent wraps an Agent, not {type(agent).__name__}")
        if not isinstance(name, str) or not name.strip():
            raise ValueError("name the durable agent (name='shop'): its workflows are found "
                             "by it after a crash, so it must be the same in every process")
        self.agent = agent
        self.name = name
        self.ran: Counter[str] = Counter()
        self.replayed: Counter[str] = Counter()

        def workflow(task: str) -> RunResult:  # what DBOS records and recovers
            return self._execute(task)
        self._workflow = DBOS.workflow(name=f"{name}.run")(workflow)

    def run(self, task: str, workflow_id: str | None = None) -> RunResult:
        """Run ``task`` as a workflow and wait for its `RunResult`. A ``workflow_id`` that
        already finished returns its recorded result without running anything."""
        with SetWorkflowID(workflow_id or f"{self.name}-{uuid4().hex[:12]}"):
            return self._workflow(task)

    def start(self, task: str, workflow_id: str | None = None) -> Any:
        """Start the workflow in the background: a DBOS ``WorkflowHandle``
        (``.get_workflow_id()``, ``.get_result()``). A run that may wait for a person."""
        with SetWorkflowID(workflow_id or f"{self.name}-{uuid4().hex[:12]}"):
            return DBOS.start_workflow(self._workflow, task)

    @staticmethod
    def pending(workflow_id: str, *, client: Any = None) -> list[dict]:
        """The calls a durable run waits on (``Permissions(..., approve="pause")``), as in
        ``RunResult.pending``; ``[]`` when it waits on none. ``client``: a ``DBOSClient``,
        to ask from a process that does not run workflows (else DBOS, launched)."""
        return (client or DBOS).get_event(workflow_id, PENDING, timeout_seconds=0) or []

    @staticmethod
    def approve(workflow_id: str, approvals: dict[str, bool], *, client: Any = None) -> None:
        """Answer the calls a durable run waits on, from any process: ``{call_id: True}``
        runs one, ``False`` refuses it (the model reads why). The run goes on once every
        waiting call has an answer (one message or several). ``ValueError`` for a call that
        is not waiting, or an answer that is not True or False."""
        if not isinstance(approvals, dict) or not approvals:
            raise TypeError("approvals is a dict {call_id: True or False}")
        waiting = sorted(p["id"] for p in DBOSAgent.pending(workflow_id, client=client))
        if stale := sorted(set(approvals) - set(waiting)):
            raise ValueError(f"call {stale[0]!r} is not waiting for approval in workflow "
                             f"{workflow_id!r}; the calls waiting are {waiting}")
        if wrong := [k for k, v in approvals.items() if not isinstance(v, bool)]:
            raise ValueError(f"the answer for {wrong[0]!r} is {approvals[wrong[0]]!r}; give "
                             "True (run it) or False (refuse it)")
        (client or DBOS).send(workflow_id, dict(approvals), topic=APPROVALS)

    # -- inside the workflow ---------------------------------------------------------------

    def _execute(self, task: str) -> RunResult:
        """The run, with the agent's model and tools as steps (every attempt, from the
        start); a pause waits here for the person's answers, then the run goes on."""
        log = StepLog(self, unfinished(DBOS.workflow_id))
        agent = self._durable_agent(log)
        result = agent.run(task, call_log=log)
        while result.outcome == "awaiting_approval":
            DBOS.set_event(PENDING, result.pending)  # for `pending`, in any process
            answered = answers(result.pending)
            DBOS.set_event(PENDING, [])  # answered: no call waits until the next pause
            result = agent.resume(result, answered)  # (no log: its steps would shift)
        return result

    def _durable_agent(self, log: StepLog) -> Agent:
        """A copy of the agent whose model requests and tool calls are steps: its own tools,
        and those its mechanisms make for a run (an MCP server's), but not the harness's
        (``todo_write``, ``delegate_task``...), which only act on the run and run again as
        it is rebuilt (a sub-agent's requests and calls are steps themselves). ``log``
        watches its events too: a resumed run (``agent.resume``) takes no call log."""
        agent = copy.copy(self.agent)
        agent.model = StepModel(self.agent.model, self)
        agent.tools = {name: self._step_tool(t, log) for name, t in self.agent.tools.items()}
        agent.stack = Stack(replace(layer, make=self._making(layer.make, log))
                            for layer in self.agent.stack)
        agent.observers = [*self.agent.observers, log]
        return agent

    def _step_tool(self, tool: Tool, log: StepLog) -> Tool:
        """``tool``, each call a step (a copy: the agent's own is untouched)."""
        if tool.harness_tool:
            return tool
        step = copy.copy(tool)
        step.parallel = False  # steps are numbered in the order they start: one at a time

        def execute(args: Any, control: Any = None) -> ToolResult:
            agent_id, call_id, arguments = CALL.get() or (self.agent.agent_id, "?", None)
            if log.unknown_call(agent_id, call_id, tool):  # (a resumed run: no `recorded`)
                return self.call(tool, agent_id, call_id, arguments, lambda: UNKNOWN)
            return self.call(tool, agent_id, call_id, arguments,
                             lambda: tool.execute(args, control))
        step.execute = execute
        return step

    def call(self, tool: Tool, agent_id: str, call_id: str, arguments: Any,
             body: Callable[[], ToolResult]) -> ToolResult:
        """One call as steps: with side effects, its intent first; then the call itself,
        with its idempotency key set while it runs."""
        key = f"{DBOS.workflow_id}:{call_id}" if agent_id == self.agent.agent_id else \
            f"{DBOS.workflow_id}:{agent_id}:{call_id}"
        if tool.side_effects:
            self.step(f"intent:{tool.name}", lambda: {
                "agent_id": agent_id, "call_id": call_id, "tool": tool.name,
                "arguments": arguments, "key": key})
        token = KEY.set(key)
        try:
            return self.step(f"tool:{tool.name}", body)[0]
        finally:
            KEY.reset(token)

    def step(self, name: str, fn: Callable[[], Any]) -> tuple[Any, bool]:
        """``fn()`` as the workflow's next step: (its result, whether it ran now). A step
        recorded in an earlier attempt is answered from the record: ``fn`` does not run."""
        ran = []

        def body() -> Any:
            ran.append(True)
            return fn()
        try:
            return DBOS.run_step({"name": name}, body), bool(ran)
        finally:
            (self.ran if ran else self.replayed)[name] += 1

    def _making(self, make: Callable[[Any], Any], log: StepLog) -> Callable[[Any], Any]:
        """A layer's ``make``, whose mechanism's tools (an MCP server's) are steps too."""
        def made(door: Any) -> Any:
            mechanism = make(door)
            if mechanism is not None:
                tools = mechanism.tools
                mechanism.tools = lambda: [self._step_tool(t, log) for t in tools()]
            return mechanism
        return made


class StepModel:
    """The agent's model, each request a step. A `ScriptedModel` keeps its place in its
    script: a reply answered from the record moves it on (it is offline, so asking it
    again costs nothing), and the same script finishes a rebuilt run. Any other model is
    never asked for a request the record answers."""

    serial = True  # sub-agents take turns: steps are numbered in the order they start

    def __init__(self, model: Any, durable: DBOSAgent) -> None:
        self.inner = model
        self.durable = durable
        self.model = getattr(model, "model", None)  # what run_start says of the model
        self.context_window = getattr(model, "context_window", None)

    def complete(self, messages: list[dict], tools: list[dict], tool_choice: Any = None,
                 *, report: Any = None, purpose: str | None = None) -> ModelReply:
        reply, ran = self.durable.step("model", lambda: ask(
            self.inner, messages, tools, tool_choice, report, purpose))
        if not ran and isinstance(self.inner, ScriptedModel):
            with suppress(ModelError):  # the record is what happened
                self.inner.complete(messages, tools, tool_choice,
                                    **({"purpose": purpose} if purpose else {}))
        return reply


class StepLog:
    """The call log of a durable run, on the seam lesson 11's `CallLog` uses: the call
    path asks it whether a call was answered before (`recorded`) and shows it each event
    (the ``tool_call`` of the call about to run). DBOS records the results (tool steps)."""

    def __init__(self, durable: DBOSAgent, unknown: set[tuple[str, str]]) -> None:
        self.durable = durable
        self.unknown = unknown  # calls with side effects an earlier attempt left unfinished

    def unknown_call(self, agent_id: str, call_id: str, tool: Tool) -> bool:
        """Was this call in flight when an earlier attempt stopped, and is it not safe to
        run again (side effects, not `idempotent`)?"""
        return (agent_id, call_id) in self.unknown and not getattr(tool, "idempotent", False)

    def recorded(self, agent_id: str, call_id: str, tool: Tool,
                 arguments: Any = None) -> tuple[str, ToolResult] | None:
        """``("unknown", ...)`` for a call that must not run again (`unknown_call`); None:
        run it (a recorded step is answered by DBOS). Its steps are taken all the same, so
        the ones after keep their place: the intent from the record, the call's answer
        recorded as unknown."""
        if not self.unknown_call(agent_id, call_id, tool):
            return None
        return "unknown", self.durable.call(tool, agent_id, call_id, None, lambda: UNKNOWN)

    def intent(self, agent_id: str, call_id: str, tool: str, arguments: Any) -> None:
        """Nothing to write: the intent is a step taken as the call runs (`DBOSAgent.call`)."""

    def result(self, *args: Any) -> None:
        """Nothing to write: DBOS recorded the tool step's result."""

    def on_event(self, event: Any) -> None:
        """A call about to run (its ``tool_call`` event): its id makes its idempotency key.
        (Shown twice to the top run, as its call log and as an observer: the same.)"""
        if event.type == "tool_call" and event.get("runnable"):
            CALL.set((event.agent_id, event.call_id, event.arguments))


def answers(pending: list[dict]) -> dict[str, bool]:
    """The person's answer to each waiting call, sent by `DBOSAgent.approve` from any
    process. The workflow waits here; each message it receives is recorded (DBOS.recv is
    a step), so after a restart it has the answers, or waits on."""
    waiting, answered = {p["id"] for p in pending}, {}
    while set(answered) != waiting:
        message = DBOS.recv(APPROVALS, timeout_seconds=WAIT)
        if isinstance(message, dict):  # (`approve` checked it; the first answer holds)
            answered.update({k: v for k, v in message.items()
                             if k in waiting and k not in answered and isinstance(v, bool)})
    return answered


def unfinished(workflow_id: str) -> set[tuple[str, str]]:
    """(agent id, call id) of each call with side effects that an earlier attempt of this
    workflow started and never finished (an intent step with no step after it), or that was
    answered unknown then. Read outside the workflow (in an empty context): read inside it,
    the read would be a step itself, answered from the first attempt's record."""
    steps = contextvars.Context().run(DBOS.list_workflow_steps, workflow_id)
    by_id = {step["function_id"]: step for step in steps}
    calls = set()
    for step in steps:
        if step["function_name"].startswith("intent:"):
            after = by_id.get(step["function_id"] + 1)
            if after is None or after["output"] == UNKNOWN:
                calls.add((step["output"]["agent_id"], step["output"]["call_id"]))
    return calls
