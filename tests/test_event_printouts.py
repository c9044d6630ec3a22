"""Event printouts never cut the word a lesson is about (issue 13).

The lessons print events with `course.show_events` and the panel's log with
`format_event`; both used to cut a value after a fixed number of characters, so a reader
saw ``status=blocke...`` or ``returns.md:17: Fo…``. A long value is now cut at a word,
and the short fields that carry the story (a status, an id) are never cut at all.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lessons"))

from course import show_events

from harness import Event
from harness.ui.display import format_event, short

LONG = "docs/policies/returns.md:17 For hygiene reasons, opened in-ear headphones " * 3


def test_show_events_prints_a_status_and_the_arguments_whole(capsys):
    show_events([
        Event("tool_call", data={"call_id": "call_1_0", "tool_name": "lookup_order",
                                 "arguments": {"order_id": "ORD-1002"}}),
        Event("tool_result", data={"call_id": "call_1_0", "tool_name": "lookup_order",
                                   "status": "blocked", "output": LONG}),
    ])
    out = " ".join(capsys.readouterr().out.split())
    assert '"order_id": "ORD-1002"' in out or "'order_id': 'ORD-1002'" in out
    assert "status=blocked," in out


def test_a_long_value_is_cut_at_a_word_never_inside_one():
    for limit in range(40, 90, 7):  # each with a space past half its length
        line = short(LONG, limit)
        kept = line[:-1]
        assert len(line) <= limit and line.endswith("…") and LONG.startswith(kept)
        assert LONG[len(kept)] in " ,;:", line  # a whole word ends the cut


def test_the_panel_log_line_ends_on_a_whole_word():
    line = format_event(Event("tool_result", data={
        "tool_name": "search_docs", "ok": True, "status": "ok", "output": LONG}))
    kept = line.split(": ", 1)[1][:-1]
    assert line.endswith("…") and LONG.startswith(kept) and LONG[len(kept)] in " ,;:", line
