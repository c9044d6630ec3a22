"""A server's tools as harness `Tool`s: named, checked, and answered like any other.

    server "shop", tool "get_order"  ->  Tool "mcp__shop__get_order"

Everything a server says is data: its tool names are cut to the characters a tool name
may hold, its descriptions are capped and shown with their invisible characters
escaped, its schema is the only thing the model's arguments are checked against (with
no field the schema does not name, like every tool here), and its annotations say
only whether a call changes the world (``readOnlyHint``; unannotated: it does). None
of it can name a permission, add a tool, or reach past the call path.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any, ClassVar

from ..tools import DEFAULT_MAX_OUTPUT, Tool, ToolArgumentError, ToolResult, parse_json_object
from ..ui.display import escape

MAX_DESCRIPTION = 1_000  # characters of a tool's description the model reads
MAX_FIELD_DESCRIPTION = 300  # ...and of each description inside its schema
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


def capped(text: str | None, limit: int) -> str:
    """A server's text as the model may read it: escaped, at most ``limit`` characters
    and a note that says it was cut."""
    text = escape(text or "", lines=True).strip()
    if len(text) <= limit:
        return text
    return (f"{text[:limit].rstrip()} [cut: the server's description has {len(text):,} "
            f"characters; the first {limit:,} are shown]")


def clean_schema(schema: Any) -> dict:
    """The server's input schema as sent to the model: an object schema, its nested
    descriptions capped; unknown top-level fields are refused unless it allows them."""
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        raise ValueError("its input schema is not a JSON object schema")
    schema = copy.deepcopy(schema)
    _cap_descriptions(schema)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    if len(json.dumps(schema)) > MAX_SCHEMA:
        raise ValueError(f"its input schema is longer than {MAX_SCHEMA:,} characters")
    return schema


def _cap_descriptions(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("description", "title") and isinstance(value, str):
                node[key] = capped(value, MAX_FIELD_DESCRIPTION)
            else:
                _cap_descriptions(value)
    elif isinstance(node, list):
        for item in node:
            _cap_descriptions(item)


class Arguments(dict):
    """Checked arguments: what the call path reads from any tool's (``model_dump``)."""

    def model_dump(self, mode: str = "python") -> dict:
        return copy.deepcopy(dict(self))


class MCPTool(Tool):
    """One tool of one server, on the one call path. ``server_tool``: its real name."""

    def __init__(self, server: Any, listed: Any, name: str,
                 max_output: int = DEFAULT_MAX_OUTPUT) -> None:
        import jsonschema

        self.server, self.server_tool = server, listed.name
        self.input_schema = clean_schema(listed.input_schema)
        strict = dict(self.input_schema)
        strict.setdefault("additionalProperties", False)  # like every tool: no extra field
        cls = jsonschema.validators.validator_for(strict, jsonschema.Draft202012Validator)
        cls.check_schema(strict)  # a schema that cannot check anything is refused here
        self.validator = cls(strict)
        hints = listed.annotations
        read_only = bool(hints and hints.read_only_hint)
        self.destructive = not read_only and not (hints and hints.destructive_hint is False)
        about = capped(listed.description, MAX_DESCRIPTION) or f"{listed.name} (no description)"
        super().__init__(name, f"[MCP server {server.name}] {about}", _NoModel, self._call,
                         max_output=max_output, side_effects=not read_only)

    def schema(self) -> dict:
        return {"type": "function", "function": {"name": self.name,
                                                 "description": self.description,
                                                 "parameters": self.input_schema}}

    def parse(self, arguments: str | None) -> Arguments:
        text = (arguments or "").strip() or "{}"
        value = parse_json_object(text)
        errors = sorted(self.validator.iter_errors(value), key=lambda e: list(e.path))
        if errors:
            where = "/".join(map(str, errors[0].path)) or "arguments"
            raise ToolArgumentError(f"{where}: {errors[0].message[:300]}")
        return Arguments(value)

    def execute(self, args: Any, control: Any = None) -> ToolResult:
        return self._call(dict(args), control)

    def _call(self, arguments: dict, control: Any = None) -> ToolResult:
        answer = self.server.call(self.server_tool, arguments, control)
        if isinstance(answer, ToolResult):
            return answer
        return ToolResult(not answer.is_error, result_text(answer) or "(no output)")


class _NoModel:
    """An MCP tool's arguments are checked against its JSON schema, not a pydantic model."""

    model_fields: ClassVar[dict] = {}


def result_text(result: Any) -> str:
    """A `CallToolResult` as the text the model reads: its text blocks; what is not text
    (an image, audio, a resource) named, not pasted; structured content as JSON when
    there is no text beside it."""
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
    if result.structured_content is not None and not any(
            getattr(b, "type", "") == "text" for b in result.content):
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=1))
    return "\n".join(parts)


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
