"""Tools: typed Python functions the model may call, with strict argument checking.

    @tool                               schema() -> {"type": "function", "function": {
    def add(a: int, b: int) -> int:         "name": "add", "description": "Add two numbers.",
        "Add two numbers."                  "parameters": {... from a pydantic model ...}}}
        return a + b

Whatever goes wrong becomes one line the model can act on: `ToolResult(ok=False, ...)`."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, create_model

from .control import RunControl
from .tool_text import (DEFAULT_MAX_OUTPUT, ToolArgumentError, cap, describe, error_line,
                        parse_json_object, split_docstring, strip_titles, to_text)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced: ``ok`` and the text the model will read."""

    ok: bool
    output: str


@dataclass(eq=False, repr=False)
class Tool:
    """A name, a description, a pydantic model of the arguments, and the function they go to."""

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[..., Any]
    _: KW_ONLY
    max_output: int = DEFAULT_MAX_OUTPUT
    writes: str | None = None  # the argument holding a path it writes (the tool_call event's)
    side_effects: bool = False  # it changes the world: a replay returns its recorded result
    parallel: bool = False  # safe beside other calls of its round: they may run at once
    harness_tool: bool = False  # made by the harness: Permissions allows it unless named
    replan: bool = False  # a planning agent's next request forces todo_write (delegate_task)
    control: str | None = None  # the keyword argument of fn that gets the run's RunControl

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(f"tool name {self.name!r}: use 1-64 letters, digits, '_' or '-'")
        if self.writes is not None and self.writes not in self.args_model.model_fields:
            raise ValueError(f"writes={self.writes!r}: tool {self.name!r} has no such argument")
        self.description = self.description.strip()
        self.side_effects = self.side_effects or self.writes is not None
        self.enabled = True  # a switch checked at every call; the run refuses a tool turned off
        self._schema: dict | None = None
        self._fields = tuple(self.args_model.model_fields)  # pydantic builds it at each ask
        self.schema()  # built now: a type pydantic cannot describe fails here, not in a run

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def schema(self) -> dict:
        """The function schema sent to the model in the request's ``tools`` list."""
        if self._schema is None:
            parameters = strip_titles(self.args_model.model_json_schema())
            self._schema = {"type": "function", "function": {
                "name": self.name, "description": self.description, "parameters": parameters}}
        return self._schema

    def parse(self, arguments: str | None) -> BaseModel:
        """Parse and validate the model's argument string, or raise `ToolArgumentError`.
        Strict JSON mode: ``"2"`` is not an int, but a string is a fine `Enum`, `date`, `Path`."""
        text = (arguments or "").strip() or "{}"
        try:
            return self.args_model.model_validate_json(text, strict=True)
        except Exception as exc:  # bad JSON, a field's problem, a validator that raised
            parse_json_object(text)  # bad JSON, trailing data, not an object: said plainly
            raise ToolArgumentError(describe(exc)) from None

    def execute(self, args: BaseModel, control: RunControl | None = None) -> ToolResult:
        """Run the function: an exception (even `SystemExit`, not `KeyboardInterrupt`) becomes
        ``ok=False``; a value's text is made within ``control``'s time (a ``__str__`` may hang)."""
        text = (control or RunControl(1)).text
        kwargs = {name: getattr(args, name) for name in self._fields}
        try:
            value = self.fn(**kwargs, **({self.control: control} if self.control else {}))
            ok = bool(value.ok) if isinstance(value, ToolResult) else True
            out = value.output if isinstance(value, ToolResult) else value
            out = str(out) if type(out) in (str, int) else text(to_text, out)
        except KeyboardInterrupt:  # the person at the keyboard
            raise
        except BaseException as exc:  # the model reads the reason and goes on
            return ToolResult(False, cap(text(error_line, exc), self.max_output))
        return ToolResult(ok, out if len(out) <= self.max_output else cap(out, self.max_output))


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         max_output: int = DEFAULT_MAX_OUTPUT, writes: str | None = None,
         side_effects: bool = False, parallel: bool = False) -> Any:
    """Make a `Tool` from a typed function, as ``@tool`` or ``@tool(name=...)``: its docstring
    is the description, its ``Args:`` section (or ``Annotated[str, Field(description=...)]``)
    describes each argument; a parameter typed `RunControl` gets the run's control.

    Args:
        fn: a plain ``def`` with a type hint on each named parameter.
        name: the tool's name (the function's by default).
        max_output: how many characters of a result the model reads (head and tail).
        writes: the argument holding a path it writes (shown in its ``tool_call`` event).
        side_effects: it changes the world (``writes`` implies it): a replay returns its
            recorded result instead of running it again.
        parallel: it is safe to run at the same time as the other calls of its round (it
            only reads, and shares nothing unguarded); ignored with side effects.
    """
    if fn is None:  # @tool(...): a decorator with these settings
        return lambda f: tool(f, name=name, max_output=max_output, writes=writes,
                              side_effects=side_effects, parallel=parallel)
    from pydantic import Field  # here, not at the top: it costs `import harness` 40 ms

    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(f"@tool {fn.__name__}: an async function returns a coroutine, not its "
                        "result; write a plain def that runs it with asyncio.run(...)")
    summary, arg_docs = split_docstring(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    control = None
    # eval_str: under `from __future__ import annotations` the hints are strings.
    for pname, param in inspect.signature(fn, eval_str=True).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind == param.VAR_POSITIONAL else "**"
            raise TypeError(f"@tool {fn.__name__}: {stars}{pname} cannot be sent as JSON "
                            "arguments; give each argument its own named parameter")
        if RunControl in (param.annotation, *get_args(param.annotation)):
            control = pname
            continue
        if param.annotation is inspect.Parameter.empty:
            raise TypeError(f"@tool {fn.__name__}: parameter {pname!r} needs a type hint")
        default = ... if param.default is inspect.Parameter.empty else param.default
        doc = arg_docs.get(pname)  # None would erase an Annotated Field's description
        fields[pname] = (param.annotation, Field(default, description=doc) if doc else default)
    model = create_model(f"{fn.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
    return Tool(name or fn.__name__, summary or fn.__name__, model, fn, max_output=max_output,
                writes=writes, side_effects=side_effects, parallel=parallel, control=control)
