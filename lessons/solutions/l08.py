"""Reference solutions for lesson 08, execution control."""

from __future__ import annotations

import threading
from pathlib import Path

from harness import CommandTool
from harness.events import Event


def make_query_tool(root: Path) -> CommandTool:
    """`query_record` that accepts only an order id: ORD- and four digits."""
    return CommandTool(
        "query_record", "Print one order record as JSON.",
        template="python tools/query_record.py --id {record_id}",
        params={"record_id": "the order id: ORD- and four digits, e.g. ORD-1001"},
        cwd=root, pattern=r"ORD-[0-9]{4}",
    )


class CancelAfter:
    """An observer that sets ``cancel`` once ``n`` tool calls have finished."""

    def __init__(self, n: int, cancel: threading.Event) -> None:
        self.n, self.cancel, self.finished = n, cancel, 0

    def on_event(self, event: Event) -> None:
        if event.type == "tool_result":
            self.finished += 1
            if self.finished >= self.n:
                self.cancel.set()
