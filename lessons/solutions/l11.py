"""Reference solutions for lesson 11, checked results and the call log."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from harness import CommandTool, Workspace
from harness.events import Event

CITATION = re.compile(r"([\w./-]+\.md):(\d+)")  # docs/policies/returns.md:17, as in the lesson


def cites_real_policy(ws: Workspace) -> Callable[[Event], str | None]:
    """A stop hook: refuse an answer unless each path:line it cites is a line of text in ``ws``."""

    def check_citations(event: Event) -> str | None:
        found = CITATION.findall(event.final or "")
        if not found:
            return "it cites no policy line; add the path:line of each line you used."
        for path, number in found:
            try:
                lines = ws.read_file(path).splitlines()
            except ValueError:  # no such file, outside the workspace, not text
                return f"{path}:{number} names no file in the workspace."
            if not 1 <= int(number) <= len(lines) or not lines[int(number) - 1].strip():
                return (f"{path}:{number} is not a line of text: {path} has {len(lines)} "
                        "lines. Cite the path:line a tool returned.")
        return None

    return check_citations


def order_tools(root: Path) -> list[CommandTool]:
    """lookup_order only reads (a replay runs it again); export_order changes the world."""
    order_id = {"order_id": "the order id: ORD- and four digits, e.g. ORD-1002"}
    lookup = CommandTool("lookup_order", "Print one order record as JSON.",
                         template="python tools/query_record.py --id {order_id}",
                         params=order_id, cwd=root, pattern=r"ORD-[0-9]{4}", side_effects=False)
    export = CommandTool("export_order", "Send one order to the warehouse.",
                         template="python tools/export_order.py {order_id}",
                         params=order_id, cwd=root, pattern=r"ORD-[0-9]{4}", side_effects=True)
    return [lookup, export]
