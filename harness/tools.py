"""Tools: typed Python functions the model may call, with strict argument checking.

    @tool                               schema() -> {"type": "function", "function": {
    def add(a: int, b: int) -> int:         "name": "add", "description": "Add two numbers.",
        "Add two numbers."                  "parameters": {... from a pydantic model ...}}}
        return a + b

Arguments are validated strictly. Whatever goes wrong (bad JSON, bad arguments, an exception
in the tool) becomes `ToolResult(ok=False, output=<one line the model can act on>)`.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .control import RunControl
from .tool_text import (ToolArgumentError, cap, describe, error_line, parse_json_object, reason,
                        split_docstring, strip_titles, to_text)

DEFAULT_MAX_OUTPUT = 8_000  # characters of tool output the model gets back


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced: ``ok`` and the text the model will read."""

    ok: bool
    output: str


@dataclass(eq=False, repr=False)
class Tool:
    """A tool: a name, a description, a pydantic model of its arguments, and a function
    called with them as keywords. `@tool` builds one from a typed, documented function."""

    name: str
    description: str
    args_model: type[BaseModel]
    fn: Callable[..., Any]
    _: KW_ONLY
    max_output: int = DEFAULT_MAX_OUTPUT
    writes: str | None = None  # the argument holding a path it writes (the tool_call event's)
    side_effects: bool = False  # it changes the world: a replay returns its recorded result
    harness_tool: bool = False  # made by the harness: Permissions allows it unless named
    replan: bool = False  # a planning agent's next request forces todo_write (delegate_task)
    control: str | None = None  # the keyword argument of fn that gets the run's RunControl

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(f"tool name {self.name!r}: use 1-64 letters, digits, '_' or '-'")
        if self.writes is not None and self.writes not in self.args_model.model_fields:
            raise ValueError(f"tool {self.name!r}: writes={self.writes!r} is not one of its "
                             "arguments")
        self.description = self.description.strip()
        self.side_effects = self.side_effects or self.writes is not None
        self.enabled = True  # a switch checked at every call; the run refuses a tool turned off
        self._fields = tuple(self.args_model.model_fields)  # the function's keyword arguments
        self._schema: dict | None = None

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
        except ValidationError as exc:
            parse_json_object(text)  # bad JSON, trailing data, not an object: say so plainly
            raise ToolArgumentError(describe(exc)) from None
        except Exception as exc:  # a validator of yours that raised something else
            raise ToolArgumentError(f"arguments could not be validated ({reason(exc)})") from None

    def execute(self, args: BaseModel, control: RunControl | None = None) -> ToolResult:
        """Run the function; an exception (even `SystemExit`) becomes ``ok=False``, but not
        `KeyboardInterrupt`: the person at the keyboard. ``control`` makes the result text
        within the time left (a ``__str__`` may never end)."""
        text = (control or RunControl(1)).text
        kwargs = {name: getattr(args, name) for name in self._fields}
        try:
            value = self.fn(**kwargs, **({self.control: control} if self.control else {}))
            ok, out = (bool(value.ok), value.output) if isinstance(value, ToolResult) else (
                True, value)
            # text and whole numbers are their own text; another value's may take long
            out = out if type(out) is str else str(out) if type(out) is int else text(to_text, out)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the model reads the reason and goes on
            ok, out = False, text(error_line, exc)
        return ToolResult(ok, out if len(out) <= self.max_output else cap(out, self.max_output))


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         max_output: int = DEFAULT_MAX_OUTPUT, writes: str | None = None,
         side_effects: bool = False) -> Any:
    """Make a `Tool` from a typed function: its docstring is the description, its
    ``Args:`` section (or ``Annotated[str, Field(description=...)]``) describes each
    argument; a parameter typed `RunControl` gets the run's control, not the model's."""
    def build(f: Callable[..., Any]) -> Tool:
        from pydantic import Field  # here, not at the top: it costs `import harness` 40 ms

        if inspect.iscoroutinefunction(f) or inspect.isasyncgenfunction(f):
            raise TypeError(f"@tool {f.__name__}: an async function would return a coroutine, "
                            "not its result; write it as a plain def (run the coroutine inside "
                            "with asyncio.run(...)), or build a Tool whose fn does")
        summary, arg_docs = split_docstring(inspect.getdoc(f) or "")
        fields: dict[str, Any] = {}
        control = None
        # eval_str: under `from __future__ import annotations` the hints are strings.
        for pname, param in inspect.signature(f, eval_str=True).parameters.items():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                stars = "*" if param.kind == param.VAR_POSITIONAL else "**"
                raise TypeError(f"@tool {f.__name__}: {stars}{pname} cannot be sent as JSON "
                                "arguments; give each argument its own named parameter")
            if RunControl in (param.annotation, *typing.get_args(param.annotation)):
                control = pname
                continue
            if param.annotation is inspect.Parameter.empty:
                raise TypeError(f"@tool {f.__name__}: parameter {pname!r} needs a type hint")
            default = ... if param.default is inspect.Parameter.empty else param.default
            doc = arg_docs.get(pname)  # None would erase an Annotated Field's description
            fields[pname] = (param.annotation, Field(default, description=doc) if doc else default)
        model = create_model(f"{f.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields)
        made = Tool(name or f.__name__, summary or f.__name__, model, f, max_output=max_output,
                    writes=writes, side_effects=side_effects, control=control)
        made.schema()  # built now: a type pydantic cannot describe fails here, not in a run
        return made

    return build(fn) if fn is not None else build
