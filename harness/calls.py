"""The one path every tool call takes, your tools and the harness's own alike.

    lookup -> not a repeated id? switched on? within the reply's cap? -> validate
      -> answered before? (a call log being resumed or replayed)
      -> tool_call event          (its hooks: a string blocks the call)
      -> permissions              (ask: approval_request, the approver, approval_result)
      -> intent on disk (call log) -> execute -> result on disk
      -> tool_result event        (its hooks)

Every way a call can end is a `ToolResult` the model reads (capped, like any tool
output), and a ``status`` on the ``tool_result`` event:

| status              | the call                                                   | ran? |
|---------------------|------------------------------------------------------------|------|
| `ok`, `error`       | ran, and worked or failed                                  | yes  |
| `blocked`           | a pre_tool_use hook or the permissions said no             | no   |
| `unlogged`          | its intent could not be written to the call log            | no   |
| `invalid_arguments` | its arguments were refused                                 | no   |
| `unknown_tool`      | named a tool the run does not have                         | no   |
| `disabled`          | named a tool that is switched off                          | no   |
| `duplicate_id`      | reused a call id: a call id is never run twice             | no   |
| `too_many_calls`    | came after the reply's first ``max_calls_per_reply`` calls | no   |
| `recorded`          | answered from the call log of the run resumed or replayed  | no   |
| `unknown`           | started in that run, never finished: reported, not retried | no   |

A replayed call that did not run (or may have) keeps its recorded status: it never runs.

The harness answers the last seven itself, before any hook: the ``tool_call`` event
says ``runnable=False``, and your hooks only see calls that could run. A call log
(``log``: anything with the three methods of `Ledger`) is asked before, and told after.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .control import RUNNING, RunControl
from .events import frozen
from .hooks import Permissions
from .models import ModelReply
from .tools import DEFAULT_MAX_OUTPUT, Tool, ToolArgumentError, ToolResult, cap

Emit = Callable[..., "str | None"]
Verdict = tuple[str, ToolResult]  # (status, what the model reads)


class Ledger(Protocol):
    """What the call path asks a call log (harness.durable.CallLog) at its three points."""

    def recorded(self, agent_id: str, call_id: str, tool: Tool) -> Verdict | None: ...
    def intent(self, agent_id: str, call_id: str, tool: str, arguments: Any) -> None: ...
    def result(self, agent_id: str, call_id: str, tool: str, status: str, ok: bool,
               output: str) -> None: ...


@dataclass
class Call:
    """One tool call at the end of its path: what was asked, and how it ended."""

    id: str
    name: str
    tool: Tool | None
    status: str
    result: ToolResult
    args: Any = None  # the validated arguments (a pydantic model), if they were valid

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def ran(self) -> bool:
        """The tool really executed (it may still have failed)."""
        return self.status in ("ok", "error")


class CallPath:
    """The path for one run: its tools (fixed when the run starts), rules and call ids."""

    def __init__(self, tools: dict[str, Tool], permissions: Permissions | None, emit: Emit,
                 control: RunControl, *, agent_id: str = "main", per_reply: int | None = None,
                 log: Ledger | None = None) -> None:
        self.tools, self.permissions, self.emit, self.control = tools, permissions, emit, control
        self.agent_id, self.per_reply, self.log = agent_id, per_reply, log
        self.used_ids: set[str] = set()

    def unique_ids(self, reply: ModelReply) -> ModelReply:
        """Rename an id the harness made up (``call_3_0``) if the model used it already:
        only an id the model itself reused is refused as a duplicate."""
        if not reply.made_ids:
            return reply
        here = {c["id"] for i, c in enumerate(reply.tool_calls) if i not in reply.made_ids}
        for i in reply.made_ids:
            call, n = reply.tool_calls[i], 1
            base = call["id"]
            while call["id"] in self.used_ids or call["id"] in here:
                call["id"], n = f"{base}_{n}", n + 1
            here.add(call["id"])
        return reply

    def run(self, call: dict, position: int = 0) -> Call:
        """Take one call (wire format; ``position`` in its reply) down the path."""
        call_id, name = call["id"], call["function"]["name"]
        tool = self.tools.get(name)
        args, early = None, self._refusal(call_id, name, tool, position)
        if early is None or early[0] == "recorded":  # a recorded call: what it was (the plan)
            try:
                args = tool.parse(call["function"]["arguments"])
            except ToolArgumentError as exc:
                early = early or ("invalid_arguments", ToolResult(False, f"Error: {exc}"))
        self.used_ids.add(call_id)
        # What hooks, the approver and the log see is what will run: read-only JSON data.
        arguments = (frozen(args.model_dump(mode="json")) if args is not None
                     else call["function"]["arguments"])
        writes = {"writes": arguments[tool.writes]} if early is None and tool.writes else {}
        block = self.emit("tool_call", call_id=call_id, tool_name=name, arguments=arguments,
                          runnable=early is None, **writes)
        if early:
            status, result = early
        elif block := block or self._permission(tool, arguments):
            status, result = "blocked", ToolResult(False, block)
        else:
            status, result = self._execute(call_id, tool, args, arguments)
        limit = tool.max_output if tool else DEFAULT_MAX_OUTPUT
        if len(result.output) > limit:  # refusals are capped too
            result = ToolResult(result.ok, cap(result.output, limit))
        self.emit("tool_result", call_id=call_id, tool_name=name, ok=result.ok,
                  output=result.output, status=status, ran=status in ("ok", "error"))
        return Call(call_id, name, tool, status, result, args)

    def _execute(self, call_id: str, tool: Tool, args: Any, arguments: Any) -> Verdict:
        """Intent on record, then the tool, then its result: a call never runs unlogged."""
        if self.log is not None:
            try:
                self.log.intent(self.agent_id, call_id, tool.name, arguments)
            except (OSError, ValueError) as exc:  # the reason, not the log's path
                why = getattr(exc, "strerror", None) or exc
                return "unlogged", ToolResult(False, "Not run: its intent could not be written "
                                              f"to the call log ({why}).")
        self.control.budget.spend("tool_calls")
        running = RUNNING.set(self.control)  # an agent this tool runs spends this run's budget
        try:
            result = tool.execute(args, self.control)
        finally:
            RUNNING.reset(running)
        status = "ok" if result.ok else "error"
        if self.log is not None:
            try:
                self.log.result(self.agent_id, call_id, tool.name, status, result.ok,
                                result.output)
            except (OSError, ValueError) as exc:  # it ran: a resumed run reports it unknown
                warnings.warn(f"call log: the result of {call_id} was not written ({exc})",
                              RuntimeWarning, stacklevel=2)
        return status, result

    def _refusal(self, call_id: str, name: str, tool: Tool | None,
                 position: int) -> Verdict | None:
        """The harness's own refusals, before any hook."""
        if call_id in self.used_ids:
            text = f"Error: call id {call_id!r} was already used; it is not run twice."
            return "duplicate_id", ToolResult(False, text)
        if tool is None:
            available = ", ".join(self.tools) or "none"
            return "unknown_tool", ToolResult(False, f"Error: unknown tool '{name[:64]}'. "
                                                     f"Available: {available}.")
        if not tool.enabled:
            return "disabled", ToolResult(False, f"Error: tool '{name}' is switched off.")
        if self.per_reply is not None and position >= self.per_reply:
            return "too_many_calls", ToolResult(False, f"Not run: one reply may make at most "
                                                f"{self.per_reply} tool calls. Ask for the "
                                                "rest in your next reply.")
        if self.log is not None:  # resuming or replaying: answered before? (call log)
            return self.log.recorded(self.agent_id, call_id, tool)
        return None

    def _permission(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """The permission table's answer: None to run, else the reason the model reads."""
        if self.permissions is None:
            return None
        decision = self.permissions.decide(tool)
        if decision != "ask":
            return self.permissions.check(tool, arguments, decision)
        self.emit("approval_request", tool_name=tool.name, arguments=arguments)
        reason = self.permissions.check(tool, arguments, decision)
        self.emit("approval_result", tool_name=tool.name, approved=reason is None)
        return reason
