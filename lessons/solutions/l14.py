"""Reference solutions for lesson 14 (tools from elsewhere: MCP servers and skills)."""

from __future__ import annotations

import json
from collections.abc import Callable

from harness import Permissions


def shop_permissions(approve: Callable[[str, dict], bool]) -> Permissions:
    """The shop's reads allowed, its refund asked, everything else denied."""
    return Permissions({"mcp__shop__get_order": "allow", "mcp__shop__list_orders": "allow",
                        "mcp__shop__issue_refund": "ask"}, default="deny", approve=approve)


def result_text(result: dict) -> tuple[bool, str]:
    """A tools/call result (wire format) as (ok, the text the model reads)."""
    parts = []
    for block in result.get("content", []):
        if block["type"] == "text":
            parts.append(block["text"])
        else:  # image, audio: named by type; the model cannot read base64
            parts.append(f"[{block['type']}: {block.get('mimeType', 'unknown type')}, not shown]")
    said = result.get("structuredContent")
    if said is not None and not any(_holds(block, said) for block in result.get("content", [])):
        parts.append(json.dumps(said))
    return not result.get("isError", False), "\n".join(parts)


def _holds(block: dict, said: object) -> bool:
    """True if a text block is the structured content as JSON (FastMCP sends both)."""
    if block["type"] != "text":
        return False
    try:
        return json.loads(block["text"]) == said
    except ValueError:
        return False
