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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .tool_text import (ToolArgumentError, cap, describe, error_line, parse_json_object, reason,
                        text_within, to_text)

__all__ = ["DEFAULT_MAX_OUTPUT", "Tool", "ToolArgumentError", "ToolResult", "cap",
           "parse_json_object", "tool"]

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
        self.harness_tool, self.replan = harness_tool, replan
        self.enabled = True  # a switch checked at every call; the run refuses a tool turned off
        self._schema: dict | None = None
        self._fields = tuple(args_model.model_fields)  # the function's keyword arguments

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"

    def schema(self) -> dict:
        """The function schema sent to the model in the request's ``tools`` list."""
        if self._schema is None:
            params = _strip_titles(self.args_model.model_json_schema())
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

    def execute(self, args: BaseModel, *, within: float | None = None) -> ToolResult:
        """Run the function on validated arguments; an exception becomes ``ok=False``.

        Besides every `Exception`, the ways a tool's code can end that are not a
        person's: ``sys.exit()`` (`SystemExit`), a generator closed under it
        (`GeneratorExit`), an ``asyncio`` task cancelled inside it (`CancelledError`).
        `KeyboardInterrupt` is the person at the keyboard: it goes on to the loop.
        ``within``: the seconds the run has left, to turn the result into text (an
        object whose ``__str__`` never ends cannot hold the run past its time).
        """
        try:
            value = self.fn(**{name: getattr(args, name) for name in self._fields})
            ok = bool(value.ok) if isinstance(value, ToolResult) else True
            value = value.output if isinstance(value, ToolResult) else value
            return ToolResult(ok, cap(text_within(to_text, value, within), self.max_output))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the model reads the reason and goes on
            return ToolResult(False, cap(text_within(error_line, exc, within), self.max_output))


def tool(fn: Callable[..., Any] | None = None, *, name: str | None = None,
         max_output: int = DEFAULT_MAX_OUTPUT, writes: str | None = None,
         side_effects: bool = False) -> Any:
    """Make a `Tool` from a typed function; its docstring becomes the description.

    Parameter descriptions come from an ``Args:`` section of the docstring (or from
    ``Annotated[str, Field(description=...)]``)::

        @tool
        def read_file(path: str) -> str:
            '''Read a text file.

            Args:
                path: file path relative to the workspace root.
            '''
    """
    def build(f: Callable[..., Any]) -> Tool:
        summary, arg_docs = _split_docstring(inspect.getdoc(f) or "")
        fields: dict[str, Any] = {}
        # eval_str: under `from __future__ import annotations` the hints are strings.
        for pname, param in inspect.signature(f, eval_str=True).parameters.items():
            if param.annotation is inspect.Parameter.empty:
                raise TypeError(f"@tool {f.__name__}: parameter {pname!r} needs a type hint")
            default = ... if param.default is inspect.Parameter.empty else param.default
            doc = arg_docs.get(pname)  # None would erase an Annotated Field's description
            fields[pname] = (param.annotation, Field(default, description=doc) if doc else default)
        model = create_model(
            f"{f.__name__}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        return Tool(name or f.__name__, summary or f.__name__, model, f, max_output=max_output,
                    writes=writes, side_effects=side_effects)

    return build(fn) if fn is not None else build


def _split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its description and its ``Args:`` entries."""
    head, _, rest = doc.partition("\nArgs:")
    args: dict[str, str] = {}
    indent, current = None, None
    for line in rest.splitlines():
        if not line.strip():
            continue
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if depth < indent or depth == 0:  # the next section (Returns:, Raises:) ends Args
            break
        m = re.match(r"(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line.strip())
        if depth == indent and m:
            current = m.group(1)
            args[current] = m.group(2).strip()
        elif current:
            args[current] += " " + line.strip()
    return head.strip(), args


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keys: they cost tokens and say nothing."""
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema
