"""The one path every tool call takes, your tools and the harness's own alike. A call ends
as a `ToolResult` the model reads (capped) and a ``status`` on its ``tool_result`` event:

    ok, error          ran, and worked or failed
    blocked            a tool_call hook or the permissions said no
    unlogged           its intent could not be written to the call log
    invalid_arguments  its arguments were refused
    unknown_tool       named a tool the run does not have
    disabled           named a tool that is switched off
    duplicate_id       reused a call id: a call id is never run twice
    too_many_calls     came after the reply's first ``max_calls_per_reply`` calls
    recorded           answered from the call log of a run resumed or replayed
    unknown            started in that run, never finished: reported, not retried
    (pending)          waits for a person (``approve="pause"``): no answer until pause.py

The last seven are the harness's own answers (``runnable=False``): a hook sees such a
call, but cannot make it run.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .control import RunControl
from .events import frozen
from .hooks import Permissions
from .outcomes import RunOver
from .tools import DEFAULT_MAX_OUTPUT, Tool, ToolArgumentError, ToolResult, cap

PAUSED = "(waiting for a person's approval)"  # `_permission`'s answer, told apart by identity
WAITING = ToolResult(False, PAUSED)
Emit = Callable[..., "str | None"]
Verdict = tuple[str, ToolResult]  # (status, what the model reads)
Ledger = Any  # a call log (harness.durable.CallLog): its recorded(), intent() and result()


@dataclass
class Call:
    """One tool call at the end of its path: what was asked, and how it ended."""

    id: str
    name: str
    tool: Tool | None
    status: str
    result: ToolResult
    args: Any = None  # the validated arguments (a pydantic model), if they were valid

    ok = property(lambda self: self.result.ok)
    ran = property(lambda self: self.status in ("ok", "error"))  # it executed (maybe failing)


class Ticket(NamedTuple):
    """A call admitted to run (``early`` None), or already answered (``early``)."""

    id: str
    name: str
    tool: Tool | None
    args: Any
    early: Verdict | None
    n: int = 0  # admitted to run: the how-manyth call of its tool in the run (a child's id)


@dataclass
class CallPath:
    """The path for one run: its tools (fixed when the run starts), rules and call ids."""

    tools: dict[str, Tool]
    permissions: Permissions | None
    emit: Emit
    control: RunControl
    agent_id: str = "main"
    per_reply: int | None = None  # calls one reply may make
    log: Ledger | None = None
    used_ids: set[str] = field(default_factory=set)
    lock: Any = field(default_factory=threading.RLock)  # the run's, its sub-agents' too
    runs: dict[str, int] = field(default_factory=dict)  # calls admitted to run, by tool
    depth: int = 0  # of its agent: 0 the main one
    pending: list[dict] = field(default_factory=list)  # calls waiting for a person
    decided: dict[str, bool] = field(default_factory=dict)  # a resumed run's answers, by id
    held: set[str] = field(default_factory=set)  # delegations whose sub-agent waits (Door)

    def run(self, call: dict, position: int = 0) -> Call:
        """Take one call (wire format; ``position`` in its reply) down the path."""
        ticket = self.admit(call, position)
        return self.finish(ticket, self.execute(ticket))

    def admit(self, call: dict, position: int = 0) -> Ticket:
        """Everything before the tool runs, on the run's thread and in the model's order:
        the harness's refusals, the arguments, the hooks, the permissions (an approval),
        the call log's intent and the tool-call budget."""
        call_id, name = call["id"], call["function"]["name"]
        raw = call["function"]["arguments"]
        tool = self.tools.get(name)
        args, early = None, self._refusal(call_id, name, tool, position)
        if early is None or early[0] == "recorded":  # a recorded call: what it was (the plan)
            try:
                args = tool.parse(raw)
            except RunOver:
                raise
            except Exception as exc:  # any tool's parse: a refusal, never the run's end
                why = exc if isinstance(exc, ToolArgumentError) else (
                    f"the arguments could not be checked ({type(exc).__name__})")
                early = early or ("invalid_arguments", ToolResult(False, f"Error: {why}"))
        self.used_ids.add(call_id)
        # What hooks, the approver and the log see is what will run: read-only JSON data.
        arguments = raw if args is None else frozen(args.model_dump(mode="json"))
        writes = {"writes": arguments[tool.writes]} if early is None and tool.writes else {}
        block = self.emit("tool_call", call_id=call_id, tool_name=name, arguments=arguments,
                          runnable=early is None, **writes)
        if early is None and (block := block or (self.permissions and
                                                 self._permission(tool, arguments, call_id))):
            early = ("pending", WAITING) if block is PAUSED else ("blocked",
                                                                   ToolResult(False, block))
        if early is None:
            self.control.budget.take("tool_calls")  # checked and spent at once: no race
        if early is None and self.log is not None:  # intent on record before it runs
            early = self._intent(call_id, tool, arguments)
        if early is None:
            self.runs[name] = self.runs.get(name, 0) + 1
        return Ticket(call_id, name, tool, args, early, self.runs.get(name, 0))

    def execute(self, ticket: Ticket) -> Verdict:
        """The tool itself (on any thread: runs of parallel calls, loop.py)."""
        if ticket.early:
            return ticket.early
        result = ticket.tool.execute(ticket.args, self.control)
        if ticket.id in self.held:  # its sub-agent waits for a person: so does this call
            return "pending", WAITING
        return "ok" if result.ok else "error", result

    def finish(self, ticket: Ticket, verdict: Verdict) -> Call:
        """Its result on record, capped, and its ``tool_result`` event."""
        status, result = verdict
        if self.log is not None and status in ("ok", "error"):
            self._result(ticket.id, ticket.tool, status, result)
        limit = ticket.tool.max_output if ticket.tool else DEFAULT_MAX_OUTPUT
        if len(result.output) > limit:  # refusals are capped too
            result = ToolResult(result.ok, cap(result.output, limit))
        self.emit("tool_result", call_id=ticket.id, tool_name=ticket.name, ok=result.ok,
                  output=result.output, status=status, ran=status in ("ok", "error"))
        return Call(ticket.id, ticket.name, ticket.tool, status, result, ticket.args)

    def _intent(self, call_id: str, tool: Tool, arguments: Any) -> Verdict | None:
        try:
            self.log.intent(self.agent_id, call_id, tool.name, arguments)
        except (OSError, ValueError) as exc:  # the reason, not the log's path
            why = getattr(exc, "strerror", None) or exc
            return "unlogged", ToolResult(False, "Not run: its intent could not be written "
                                          f"to the call log ({why}).")
        return None

    def _result(self, call_id: str, tool: Tool, status: str, result: ToolResult) -> None:
        try:
            self.log.result(self.agent_id, call_id, tool.name, status, result.ok, result.output)
        except (OSError, ValueError) as exc:  # it ran: a resumed run reports it unknown
            warnings.warn(f"call log: the result of {call_id} was not written ({exc})",
                          RuntimeWarning, stacklevel=3)

    def _refusal(self, call_id: str, name: str, tool: Tool | None,
                 position: int) -> Verdict | None:
        """The harness's own refusals, before any hook."""
        if call_id in self.used_ids:
            why = "duplicate_id", (f"Error: call id {call_id!r} was already used; it is not "
                                   "run twice.")
        elif tool is None:
            available = ", ".join(self.tools) or "none"
            why = "unknown_tool", f"Error: unknown tool '{name[:64]}'. Available: {available}."
        elif not tool.enabled:
            why = "disabled", f"Error: tool '{name}' is switched off."
        elif self.per_reply is not None and position >= self.per_reply:
            why = "too_many_calls", (f"Not run: one reply may make at most {self.per_reply} tool "
                                     "calls. Ask for the rest in your next reply.")
        else:  # resuming or replaying: answered before? (the call log)
            return self.log.recorded(self.agent_id, call_id, tool) if self.log else None
        return why[0], ToolResult(False, why[1])

    def _permission(self, tool: Tool, arguments: dict[str, Any], call_id: str) -> str | None:
        """The permission table's answer: None to run, else the reason the model reads;
        `PAUSED` when a person answers later (the call waits in ``pending``)."""
        decision = self.permissions.decide(tool)
        if decision != "ask":
            return self.permissions.check(tool, arguments, decision)
        if call_id in self.decided:  # a resumed run: the person has answered (pause.py)
            approved = self.decided.pop(call_id)
            self.emit("approval_result", tool_name=tool.name, approved=approved)
            return None if approved else self.permissions.refusal(tool.name)
        with self.lock:  # one question at a time, whichever sub-agent asks
            self.emit("approval_request", tool_name=tool.name, arguments=arguments)
            if self.permissions.approve == "pause":
                self.pending.append(dict(id=call_id, tool_name=tool.name, arguments=dict(
                    arguments), agent_id=self.agent_id, depth=self.depth))
                return PAUSED
            reason = self.permissions.check(tool, arguments, decision)
            self.emit("approval_result", tool_name=tool.name, approved=reason is None)
        return reason

