"""The one path every tool call takes, your tools and the harness's own alike.

    lookup -> not a repeated id? switched on? -> validate the arguments
      -> tool_call event          (pre_tool_use hooks: a string blocks the call)
      -> permissions              (ask: approval_request, the approver, approval_result)
      -> execute the tool
      -> tool_result event        (post_tool_use hooks, if the tool ran)

Every way a call can end is a `ToolResult` the model reads, and a ``status`` on the
``tool_result`` event:

| status              | the call                                   | ran? |
|---------------------|--------------------------------------------|------|
| `ok`, `error`       | ran, and worked or failed                  | yes  |
| `blocked`           | a pre_tool_use hook or the permissions said no | no |
| `invalid_arguments` | its arguments were refused                 | no   |
| `unknown_tool`      | named a tool the run does not have         | no   |
| `disabled`          | named a tool that is switched off          | no   |
| `duplicate_id`      | reused a call id: a call id is never run twice | no |

The harness refuses the last four itself, before any hook: the ``tool_call`` event says
``runnable=False``, and your hooks only see calls that could run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .hooks import Permissions
from .tools import DEFAULT_MAX_OUTPUT, Tool, ToolArgumentError, ToolResult, cap

Emit = Callable[..., "str | None"]


@dataclass
class Call:
    """One tool call at the end of its path: what was asked, and how it ended."""

    id: str
    name: str
    tool: Tool | None
    status: str
    result: ToolResult

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def ran(self) -> bool:
        """The tool really executed (it may still have failed)."""
        return self.status in ("ok", "error")


class CallPath:
    """The path for one run: its tools (fixed when the run starts), rules and call ids."""

    def __init__(self, tools: dict[str, Tool], permissions: Permissions | None,
                 emit: Emit) -> None:
        self.tools, self.permissions, self.emit = tools, permissions, emit
        self.used_ids: set[str] = set()

    def run(self, call: dict) -> Call:
        """Take one call (wire format) down the path; always returns how it ended."""
        call_id, name = call["id"], call["function"]["name"]
        tool = self.tools.get(name)
        args, refusal = None, self._refusal(call_id, name, tool)
        if refusal is None:
            try:
                args = tool.parse(call["function"]["arguments"])
            except ToolArgumentError as exc:
                refusal = ("invalid_arguments", f"Error: {exc}")
        self.used_ids.add(call_id)
        # What hooks, the approver and the log see is what will run: a read-only copy.
        arguments = (readonly(args.model_dump(mode="json")) if args is not None
                     else call["function"]["arguments"])
        writes = {"writes": arguments[tool.writes]} if refusal is None and tool.writes else {}
        block = self.emit("tool_call", call_id=call_id, tool_name=name, arguments=arguments,
                          runnable=refusal is None, **writes)
        limit = tool.max_output if tool else DEFAULT_MAX_OUTPUT  # refusals are capped too
        if refusal:
            status, result = refusal[0], ToolResult(False, cap(refusal[1], limit))
        elif block := block or self._permission(tool, arguments):
            status, result = "blocked", ToolResult(False, cap(block, limit))
        else:
            result = tool.execute(args)
            status = "ok" if result.ok else "error"
        self.emit("tool_result", call_id=call_id, tool_name=name, ok=result.ok,
                  output=result.output, status=status, ran=status in ("ok", "error"))
        return Call(call_id, name, tool, status, result)

    def _refusal(self, call_id: str, name: str, tool: Tool | None) -> tuple[str, str] | None:
        """The harness's own refusals, before any hook: (status, what the model reads)."""
        if call_id in self.used_ids:
            return "duplicate_id", (f"Error: call id {call_id!r} was already used; "
                                    "it is not run twice.")
        if tool is None:
            available = ", ".join(self.tools) or "none"
            return "unknown_tool", f"Error: unknown tool '{name[:64]}'. Available: {available}."
        if not tool.enabled:
            return "disabled", f"Error: tool '{name}' is switched off."
        return None

    def _permission(self, tool: Tool, arguments: dict[str, Any]) -> str | None:
        """The permission table's answer: None to run, else the reason the model reads."""
        if self.permissions is None:
            return None
        if self.permissions.decide(tool) != "ask":
            return self.permissions.check(tool, arguments)
        self.emit("approval_request", tool_name=tool.name, arguments=arguments)
        reason = self.permissions.check(tool, arguments)
        self.emit("approval_result", tool_name=tool.name, approved=reason is None)
        return reason


def readonly(value: Any) -> Any:
    """A copy of JSON-like data that refuses changes (dicts and lists, all the way down)."""
    if isinstance(value, dict):
        return ReadOnlyDict({k: readonly(v) for k, v in value.items()})
    if isinstance(value, list):
        return ReadOnlyList(readonly(v) for v in value)
    return value


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise TypeError("a call's arguments are read-only: they are what will run. To stop the "
                    "call, return a reason from pre_tool_use")


class ReadOnlyDict(dict):
    """A dict (JSON, equality, pickling all work) whose contents cannot change."""

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple:
        return ReadOnlyDict, (dict(self),)


class ReadOnlyList(list):
    """A list (JSON, equality, pickling all work) whose contents cannot change."""

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = remove = pop = clear = sort = reverse = _refuse

    def __reduce__(self) -> tuple:
        return ReadOnlyList, (list(self),)
