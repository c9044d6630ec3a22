"""What a server offers besides tools: resources and prompts, for the person, not the model.

MCP names who controls each thing a server offers: tools are the model's (it decides to
call one), resources the application's (it decides what to read and show), prompts the
user's (they pick one, like a slash command). So a run's model gets the tools only, and
the person, or the application around the agent, asks the server through `MCPServer`:

    shop.list_resources()                 # [Resource(uri='shop://policy', name=...), ...]
    shop.read_resource("shop://policy")   # its text, capped
    shop.list_prompts()                   # [Prompt(name='refund_email', arguments=...), ...]
    shop.get_prompt("refund_email", {"order_id": "ORD-1001"})
                                          # [{"role": "user", "content": "..."}]

What they return is the server's text: you decide what of it reaches a run (a task, a
system prompt). The ``mcp_server`` "started" event says how many of each a server lists.
"""

from __future__ import annotations

from typing import Any

MAX_RESOURCE = 100_000  # characters of one resource `read_resource` returns
KINDS = ("resources", "prompts")


async def listing(client: Any, kind: str, max_pages: int) -> list[Any]:
    """Every page of ``resources`` or ``prompts`` (at most ``max_pages``), read afresh."""
    ask = client.list_resources if kind == "resources" else client.list_prompts
    found, cursor = [], None
    for _ in range(max_pages):
        page = await ask(cursor=cursor, cache_mode="refresh")
        found += getattr(page, kind)
        cursor = page.next_cursor
        if cursor is None:
            break
    return found


async def counts(client: Any) -> dict[str, int | None]:
    """How many resources and prompts the first page of each lists (None: the server
    offers none of that kind, or did not say). For the "started" event; never fails."""
    offered = client.server_capabilities
    found: dict[str, int | None] = {}
    for kind in KINDS:
        found[kind] = None
        if getattr(offered, kind, None) is None:
            continue
        ask = client.list_resources if kind == "resources" else client.list_prompts
        try:
            found[kind] = len(getattr(await ask(cache_mode="refresh"), kind))
        except Exception:
            continue
    return found


def resource_text(result: Any, uri: str, max_chars: int = MAX_RESOURCE) -> str:
    """A `ReadResourceResult` as text: each text part; a binary part named, not pasted;
    at most ``max_chars`` characters and a note that says it was cut."""
    parts = []
    for item in result.contents:
        text = getattr(item, "text", None)
        if text is not None:
            parts.append(text)
        else:
            size = len(getattr(item, "blob", "") or "") * 3 // 4
            parts.append(f"[{item.mime_type or 'binary'}: {item.uri}, about {size:,} bytes, "
                         "not shown]")
    text = "\n".join(parts)
    if len(text) <= max_chars:
        return text
    return (f"{text[:max_chars]}\n[cut: {uri} has {len(text):,} characters; the first "
            f"{max_chars:,} are shown]")


def prompt_messages(result: Any) -> list[dict]:
    """A `GetPromptResult` as wire-format messages (``{"role", "content"}``): text as it
    is; an image, audio or a resource named, not pasted (an embedded text resource: its
    text)."""
    return [{"role": message.role, "content": _text(message.content)}
            for message in result.messages]


def _text(block: Any) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, not shown]"
    if kind == "resource_link":
        return f"[resource: {block.uri} ({block.name})]"
    if kind == "resource":
        inner = block.resource
        text = getattr(inner, "text", None)
        return text if text is not None else f"[resource: {inner.uri}, not shown]"
    return f"[{kind or 'content'}: not shown]"
