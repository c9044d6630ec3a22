"""Reference solutions for lesson 16 (memory that changes only on evidence, answers that say
what was found)."""

from __future__ import annotations

import re

from harness.memory import Record

NAMES = re.compile(r"\b[A-Z]{3}-\d+\b|\b\d{4}-\d{2}-\d{2}\b")  # ORD-1002, RET-002, 2024-05-06


def kind_for(cited: list[str], batch: list[Record]) -> str:
    """What the cited records support: "rule" (two items or more), "one-off" (one item), or
    "refused" (a cited record is not evidence, or none is cited)."""
    records = {r.id: r for r in batch}
    undone = {r.undoes for r in batch if r.action == "undo" and r.ok}
    if not cited or any(i not in records or not records[i].ok or i in undone for i in cited):
        return "refused"
    items = {records[i].item for i in cited}
    return "rule" if len(items) >= 2 else "one-off"


def unsupported(found: list[dict], calls: dict) -> list[str]:
    """The claims of ``found`` that its sources do not hold up, in order."""
    flawed = []
    for item in found:
        ran = [calls.get(source) for source in item["sources"]]
        succeeded = bool(ran) and all(c is not None and c.status == "ok" for c in ran)
        shown = all(any(name in c.output for c in ran if c is not None)
                    for name in NAMES.findall(item["claim"]))
        if not (succeeded and shown):
            flawed.append(item["claim"])
    return flawed
