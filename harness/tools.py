"""Tools: typed Python functions the model may call, with strict argument checking.

    @tool                               schema() -> {"type": "function", "function": {
    def add(a: int, b: int) -> int:         "name": "add", "description": "Add two numbers.",
        "Add two numbers."                  "parameters": {... from a pydantic model ...}}}
        return a + b

A call arrives as a name and a JSON string. Before the function runs, the string is
parsed strictly (one JSON object, nothing after it) and validated against the
pydantic model (no unknown fields, no missing or wrong-typed ones). Whatever goes
wrong (bad JSON, bad arguments, an exception inside the tool) becomes a
`ToolResult(ok=False, output=<one line the model can act on>)`: the run goes on, and
the model reads the reason and tries again. (That text, in and out: tool_text.py.)
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
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


class Tool:
    """A tool: a name, a description, a pydantic model of its arguments, a function.

    ``fn`` is called with the validated arguments as keyword arguments. Use `@tool` to
    build all of this from a typed, documented function; use `Tool` directly when you
    want to write the arguments model yourself.

    ``writes`` names the argument that holds a path the tool writes (``"path"`` for
    `write_file` and `edit_file`): the ``tool_call`` event then carries ``writes``, so
    one hook can guard every tool that writes, whatever its name. ``side_effects`` says
    the tool changes the world (a tool that writes does): replaying a saved run returns
    its recorded result instead of running it again (calllog.py).

    ``control`` names a keyword argument of ``fn`` that receives the run's `RunControl`
    (its deadline and cancel), for a tool that works long enough to check them.

    Two flags belong to the harness's own tools: ``harness_tool`` (made by the harness
    for one run: `Permissions` allows it unless the table names it) and ``replan``
    (after it runs, a planning agent's next request forces ``todo_write``:
    `delegate_task` sets it, since a sub-agent's answer is news the plan has not seen).
    """

    def __init__(
        self,
        name: str,
        description: str,
        args_model: type[BaseModel],
        fn: Callable[..., Any],
        *,
        max_output: int = DEFAULT_MAX_OUTPUT,
        writes: str | None = None,
        side_effects: bool = False,
        harness_tool: bool = False,
        replan: bool = False,
        control: str | None = None,
    ) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
            raise ValueError(f"tool name {name!r}: use 1-64 letters, digits, '_' or '-'")
        self.name = name
        self.description = description.strip()
        self.args_model = args_model
        self.fn = fn
        self.max_output = max_output
        if writes is not None and writes not in args_model.model_fields:
            raise ValueError(f"tool {name!r}: writes={writes!r} is not one of its arguments")
        self.writes, self.side_effects = writes, side_effects or writes is not None
        self.harness_tool, self.replan, self.control = harness_tool, replan, control
        self.enabled = True  # a switch checked at every call; the run refuses a tool turned off
        self._schema: dict | None = None
        self._fields = tuple(args_model.model_fields)  # the function's keyword arguments

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def schema(self) -> dict:
        """The function schema sent to the model in the request's ``tools`` list."""
        if self._schema is None:
            params = strip_titles(self.args_model.model_json_schema())
            self._schema = {
                "type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": params},
            }
        return self._schema

    def parse(self, arguments: str | None) -> BaseModel:
        """Parse and validate the model's argument string, or raise `ToolArgumentError`.

        Validation reads the JSON text itself (pydantic's strict JSON mode): ``"2"`` is
        not an int, but a string is a fine `Enum`, `date` or `Path`, as the schema says.
        """
        text = (arguments or "").strip() or "{}"
        try:
            return self.args_model.model_validate_json(text, strict=True)
        except ValidationError as exc:
            parse_json_object(text)  # bad JSON, trailing data, not an object: say so plainly
            raise ToolArgumentError(describe(exc)) from None
        except Exception as exc:  # a validator of yours that raised something else
            raise ToolArgumentError(f"arguments could not be validated ({reason(exc)})") from None

    def execute(self, args: BaseModel, control: RunControl | None = None) -> ToolResult:
        """Run the function on validated arguments; an exception becomes ``ok=False``.

        Besides every `Exception`, the ways a tool's code can end that are not a
        person's: ``sys.exit()`` (`SystemExit`), a generator closed under it
        (`GeneratorExit`), an ``asyncio`` task cancelled inside it (`CancelledError`).
        `KeyboardInterrupt` is the person at the keyboard: it goes on to the loop.
        ``control``: the run's, given to ``fn`` if it asks (``self.control``); it turns
        the result into text (within the time left: a ``__str__`` that never ends).
        """
        text = control.text if control is not None else lambda convert, value: convert(value)
        kwargs = {name: getattr(args, name) for name in self._fields}
        if self.control:
            kwargs[self.control] = control
        try:
            value = self.fn(**kwargs)
            ok = bool(value.ok) if isinstance(value, ToolResult) else True
            value = value.output if isinstance(value, ToolResult) else value
            return ToolResult(ok, cap(text(to_text, value), self.max_output))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the model reads the reason and goes on
            return ToolResult(False, cap(text(error_line, exc), self.max_output))


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         max_output: int = DEFAULT_MAX_OUTPUT, writes: str | None = None,
         side_effects: bool = False) -> Any:
    """Make a `Tool` from a typed function; its docstring becomes the description.

    Parameter descriptions come from an ``Args:`` section of the docstring (or from
    ``Annotated[str, Field(description=...)]``). A parameter typed `RunControl` is not
    sent by the model: the call path fills it with the run's control::

        @tool
        def read_file(path: str) -> str:
            '''Read a text file.

            Args:
                path: file path relative to the workspace root.
            '''
    """
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
                control = pname  # the run's control, filled in by the call path
                continue
            if param.annotation is inspect.Parameter.empty:
                raise TypeError(f"@tool {f.__name__}: parameter {pname!r} needs a type hint")
            default = ... if param.default is inspect.Parameter.empty else param.default
            doc = arg_docs.get(pname)  # None would erase an Annotated Field's description
            fields[pname] = (param.annotation, Field(default, description=doc) if doc else default)
        model = create_model(
            f"{f.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        return Tool(name or f.__name__, summary or f.__name__, model, f, max_output=max_output,
                    writes=writes, side_effects=side_effects, control=control)

    return build(fn) if fn is not None else build
