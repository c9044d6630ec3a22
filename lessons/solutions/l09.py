"""Reference solutions for lesson 09, one budget and cancel."""

from __future__ import annotations

import threading

from exercises.l09 import restock_one

from harness import RunControl, tool
from harness.events import Event


class CancelAfter:
    """An observer that sets ``cancel`` once ``n`` tool calls have finished."""

    def __init__(self, n: int, cancel: threading.Event) -> None:
        self.n, self.cancel, self.finished = n, cancel, 0

    def on_event(self, event: Event) -> None:
        if event.type == "tool_result":
            self.finished += 1
            if self.finished >= self.n:
                self.cancel.set()


@tool
def restock(skus: list[str], control: RunControl) -> str:
    """Restock each SKU, one at a time."""
    for done, sku in enumerate(skus):
        if reason := control.stop_reason():   # the run's cancel and deadline
            return f"Stopped ({reason}) after {done} of {len(skus)} SKUs."
        restock_one(sku)
    return f"Restocked {len(skus)} of {len(skus)} SKUs."
