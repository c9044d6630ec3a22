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
the model reads the reason and tries again.
"""

from __future__ import annotations

import inspect
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic_core import PydanticSerializationError, to_jsonable_python

DEFAULT_MAX_OUTPUT = 8_000  # characters of tool output the model gets back


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced: ``ok`` and the text the model will read."""

    ok: bool
    output: str


class ToolArgumentError(ValueError):
    """The arguments a model sent cannot be used: the message says why, in one line."""


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
            raise ToolArgumentError(_describe(exc)) from None
        except Exception as exc:  # a validator of yours that raised something else
            raise ToolArgumentError(f"arguments could not be validated ({_reason(exc)})") from None

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
            value = self.fn(**{name: getattr(args, name) for name in type(args).model_fields})
            ok = bool(value.ok) if isinstance(value, ToolResult) else True
            value = value.output if isinstance(value, ToolResult) else value
            return ToolResult(ok, cap(text_within(to_text, value, within), self.max_output))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # the model reads the reason and goes on
            return ToolResult(False, cap(text_within(_error_line, exc, within), self.max_output))


def _reason(exc: BaseException, limit: int = 200) -> str:
    """``Type: first line of the message``, at most ``limit`` characters."""
    line = _error_line(exc).removeprefix("Error: ")
    return line if len(line) <= limit else line[:limit - 3] + "..."


def _error_line(exc: BaseException) -> str:
    """``Error: Type: first line of the message`` (even when the message itself fails)."""
    try:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    except Exception:
        reason = ""
    return f"Error: {type(exc).__name__}" + (f": {reason}" if reason else "")


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


def parse_json_object(raw: str | None) -> dict:
    """Parse exactly one JSON object. An empty string means no arguments (``{}``)."""
    if raw is None or not raw.strip():
        return {}
    try:
        value, end = json.JSONDecoder().raw_decode(raw.strip())
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(
            f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise ToolArgumentError("arguments are nested too deeply") from None
    except ValueError as exc:  # a number of 4,301 digits: Python's own limit says no
        reason = str(exc).split(":")[0][:200]
        raise ToolArgumentError(f"arguments hold a value that cannot be read ({reason})") from None
    if raw.strip()[end:].strip():
        raise ToolArgumentError("arguments must be one JSON object; found more data after it")
    if not isinstance(value, dict):
        raise ToolArgumentError(f"arguments must be a JSON object, not {type(value).__name__}")
    return value


SIMPLE = (str, int, float, bool, type(None))  # turned into text at once, nothing to wait for


def text_within(convert: Callable[[Any], str], value: Any, seconds: float | None) -> str:
    """``convert(value)``, given at most ``seconds`` when a value's own code could hang.

    Beyond the deadline the conversion is left to finish in a daemon thread, and the
    model reads that the result could not be read in time.
    """
    if seconds is None or isinstance(value, SIMPLE):
        return convert(value)
    box: list = []
    worker = threading.Thread(target=lambda: box.append(_attempt(convert, value)), daemon=True)
    worker.start()
    worker.join(seconds)
    if not box:
        return ("Error: the tool's result could not be turned into text before the run's "
                "time ran out")
    text, error = box[0]
    if error is not None:
        raise error
    return text


def _attempt(convert: Callable[[Any], str], value: Any) -> tuple[str | None, BaseException | None]:
    try:
        return convert(value), None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return None, exc


def to_text(value: Any) -> str:
    """A tool's return value as the text the model reads (JSON for structures)."""
    if isinstance(value, str):
        return value
    if type(value) is int:  # the most common non-text result, and its JSON is its str()
        return str(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    try:
        return json.dumps(value, ensure_ascii=False, default=_jsonable)
    except (TypeError, ValueError):
        return str(value)


def _jsonable(value: Any) -> Any:
    """What `json.dumps` cannot write itself: pydantic models, dates, paths; else ``str``."""
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return str(value)


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters: the head and tail of long output, with a visible
    marker of what was cut between them (the marker counts towards the limit)."""
    if len(text) <= limit:
        return text
    room = limit - len(f"\n[... {len(text):,} characters cut ...]\n")
    if room < 3:  # too small for a marker: the head alone
        return text[:limit]
    head, tail = room * 2 // 3, room - room * 2 // 3
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut:,} characters cut ...]\n{text[len(text) - tail:]}"


MAX_PROBLEMS = 5  # a call with 10,000 bad fields gets a short answer, not 10,000 lines


def _describe(exc: ValidationError) -> str:
    """The problems of a call, naming each field: what a model needs to fix its call.

    Missing fields first, then unknown ones, then the rest, each in field order, so the
    text does not depend on the order pydantic happens to report them in.
    """
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        if err["type"] == "missing":
            problems.append((0, where, f"missing field '{where}'"))
        elif err["type"] == "extra_forbidden":
            problems.append((1, where, f"unknown field '{where}'"))
        else:
            problems.append((2, where, f"'{where}': {err['msg']}"))
    problems.sort(key=lambda p: (p[0], _natural(p[1])))
    shown = [text for *_, text in problems[:MAX_PROBLEMS]]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"and {len(problems) - MAX_PROBLEMS} more")
    return "invalid arguments: " + "; ".join(shown)


def _natural(where: str) -> list:
    """Sort key for a field path: ``todos.2`` before ``todos.10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in where.split(".")]


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
