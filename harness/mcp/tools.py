"""A server's tools as harness `Tool`s: named, checked, and answered like any other.

    server "shop", tool "get_order"  ->  Tool "mcp__shop__get_order"

Everything a server says is data: its tool names are cut to the characters a tool name
may hold, its descriptions are capped and shown with their invisible characters
escaped, its schema is shown the same way and is the only thing the model's arguments
are checked against (with no field the schema does not name, like every tool here;
schema.py keeps that check inside the schema and within its time). Its annotations are
hints: a tool changes the world unless the person vouches that it only reads
(``MCPServer(read_only=...)``). None of it can name a permission, add a tool, or reach
past the call path.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from ..tools import DEFAULT_MAX_OUTPUT, Tool, ToolResult, parse_json_object
from .schema import Checker, capped, shown

MAX_DESCRIPTION = 1_000  # characters of a tool's description the model reads
MAX_SCHEMA = 16_000  # characters of JSON schema: a bigger one leaves the tool out


def server_prefix(name: str) -> str:
    """``mcp__<name>__``, with the name cut to what a tool name may hold (no ``__``
    inside it: ``mcp__a__b__c`` must say which part is the server)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an MCP server needs a name, not {name!r}")
    clean = re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_-]", "-", name.strip())).strip("_")
    return f"mcp__{clean[:24]}__"


def qualified(prefix: str, tool_name: str, taken: set[str]) -> str:
    """The harness's name for a server's tool: at most 64 characters, unique in ``taken``."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", tool_name) or "tool"
    name = prefix + clean
    if len(name) > 64 or name in taken:  # a short hash of the real name keeps them apart
        tag = hashlib.sha256(tool_name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        name = f"{name[:55]}_{tag}"
    return name


def clean_schema(schema: Any) -> dict:
    """The server's input schema as sent to the model: an object schema, what only
    describes in it escaped and capped (`schema.shown`), at most `MAX_SCHEMA` long."""
    schema = copy.deepcopy(shown(schema))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if len(json.dumps(schema)) > MAX_SCHEMA:
        raise ValueError(f"its input schema is longer than {MAX_SCHEMA:,} characters")
    return schema


def read_only_names(read_only: Any, server: str = "") -> bool | frozenset[str]:
    """``MCPServer(read_only=...)`` checked: False (trust no hint), True (trust the
    server's ``readOnlyHint``) or the names of its tools the person says only read."""
    if isinstance(read_only, bool):
        return read_only
    names = (list(read_only) if isinstance(read_only, Iterable)
             and not isinstance(read_only, (str, bytes, dict)) else [None])
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"MCP server {server!r}: read_only is False (the default: a tool "
                        "changes the world, whatever its server says), True (trust the "
                        "server's readOnlyHint) or a list of its tool names that only read, "
                        f"not {read_only!r}")
    return frozenset(names)


def reads_only(server: Any, listed: Any) -> bool:
    """Whether calling this tool changes nothing, as the person says. A server's
    ``readOnlyHint`` is a hint (the MCP specification calls annotations untrusted): a
    replay re-runs a read-only tool, so a paying tool that says it only reads would pay
    twice. It counts only with ``read_only=True``; a list names the tools that read."""
    vouched = getattr(server, "read_only", False)
    if vouched is True:
        return bool(listed.annotations and listed.annotations.read_only_hint)
    return bool(vouched) and listed.name in vouched


class Arguments(dict):
    """Checked arguments: what the call path reads from any tool's (``model_dump``)."""

    def model_dump(self, mode: str = "python") -> dict:
        return copy.deepcopy(dict(self))


class MCPTool(Tool):
    """One tool of one server, on the one call path. ``server_tool``: its real name."""

    def __init__(self, server: Any, listed: Any, name: str,
                 max_output: int = DEFAULT_MAX_OUTPUT) -> None:
        self.server, self.server_tool = server, listed.name
        self.input_schema = clean_schema(listed.input_schema)  # what the model reads
        self.checker = Checker(listed.input_schema)  # what its arguments are checked with
        hints = listed.annotations
        read_only = reads_only(server, listed)
        self.destructive = not read_only and not (hints and hints.destructive_hint is False)
        about = capped(listed.description, MAX_DESCRIPTION) or f"{listed.name} (no description)"
        super().__init__(name, f"[MCP server {server.name}] {about}", _NoModel, self._call,
                         max_output=max_output, side_effects=not read_only,
                         parallel=read_only)  # what only reads may run beside other calls

    def schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name,
                                                 "description": self.description,
                                                 "parameters": self.input_schema}}

    def parse(self, arguments: str | None) -> Arguments:
        """The model's arguments if they fit the server's schema, else `ToolArgumentError`:
        also when the check itself fails or runs out of time (`Checker.check`)."""
        return Arguments(self.checker.check(parse_json_object(arguments)))

    def execute(self, args: Any, control: Any = None) -> ToolResult:
        return self._call(dict(args), control)

    def _call(self, arguments: dict, control: Any = None) -> ToolResult:
        answer = self.server.call(self.server_tool, arguments, control)
        if isinstance(answer, ToolResult):
            return answer
        try:
            text = result_text(answer)
        except Exception as exc:  # a result too deep to write out, say: the server's fault
            text = f"Error: MCP server '{self.server.name}' sent a result that cannot be " \
                   f"read ({type(exc).__name__})"
        return ToolResult(not answer.is_error, refused_write(self.server, text) or "(no output)")


READ_ONLY_WRITE = re.compile(r"read-only file system|\bEROFS\b|\.lock'? could not be obtained",
                             re.IGNORECASE)


def refused_write(server: Any, text: str) -> str:
    """``text``, and a line saying how to allow it when a sandboxed server was refused a
    write the sandbox keeps read-only (``.git`` in its folder: git's lock file)."""
    if not (getattr(server, "sandbox", None) and getattr(server, "command", None)
            and READ_ONLY_WRITE.search(text)):
        return text
    return (f"{text}\n[The sandbox refused a write: in a server's folder, .git and virtual "
            "environments are read-only. A folder named in its args (git: --repository "
            "PATH) is writable whole; or run it with \"sandbox\": false.]")


class _NoModel:
    """An MCP tool's arguments are checked against its JSON schema, not a pydantic model."""

    model_fields: ClassVar[dict] = {}


def result_text(result: Any) -> str:
    """A `CallToolResult` as the text the model reads: its text blocks; what is not text
    (an image, audio, a resource) named, not pasted; structured content as JSON unless
    the text already says it (a server may put what the text leaves out only there: a
    CI tool's exit codes)."""
    parts = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            size = len(getattr(block, "data", "") or "") * 3 // 4
            parts.append(f"[{kind}: {block.mime_type}, about {size:,} bytes, not shown]")
        elif kind == "resource_link":
            parts.append(f"[resource: {block.uri} ({block.name})]")
        elif kind == "resource":
            inner = block.resource
            text = getattr(inner, "text", None)
            parts.append(text if text is not None else
                         f"[resource: {inner.uri}, {inner.mime_type or 'binary'}, not shown]")
        else:
            parts.append(f"[{kind or 'content'}: not shown]")
    texts = [b.text for b in result.content if getattr(b, "type", "") == "text"]
    said = result.structured_content
    if said is not None and not _says(texts, said):
        parts.append(json.dumps(said, ensure_ascii=False, indent=1))
    return "\n".join(parts)


def _says(texts: list[str], said: Any) -> bool:
    """Whether the text blocks already say ``said``: one of them (or all of them
    together) is that JSON or holds it written on one line, or ``said`` holds nothing
    but strings the text holds (``{"result": text}``: an SDK's wrapping of a tool's
    text). A number is never taken as said: ``"exit": 1`` is not in ``"step 1 ran"``."""
    whole = "".join(texts)
    for text in [*texts, whole] if texts else []:
        try:
            if json.loads(text) == said:
                return True
        except (ValueError, RecursionError):
            pass
        if any(json.dumps(said, ensure_ascii=ascii, separators=separators) in text
               for ascii in (False, True) for separators in ((",", ":"), (", ", ": "))):
            return True
    strings = list(_leaves(said))
    return bool(texts) and all(isinstance(s, str) and s in whole for s in strings)


def _leaves(value: Any) -> Any:
    """The values in a JSON value (not its keys), depth first."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def tools_of(server: Any, taken: set[str] | None = None) -> tuple[list[MCPTool], list[str]]:
    """The harness tools for a server's current listing, and a line per tool left out."""
    taken, made, left = set(taken or ()), [], []
    for listed in server.listing:
        name = qualified(server.prefix, listed.name, taken)
        try:
            made.append(MCPTool(server, listed, name))
        except Exception as exc:  # one bad tool is left out; the others still work
            left.append(f"{listed.name[:64]}: {str(exc)[:200]}")
            continue
        taken.add(name)
    if server.left_out:
        left.append(f"{server.left_out} more tool(s) past max_tools={server.max_tools}")
    return made, left
