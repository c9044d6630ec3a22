"""Every lesson, the way a learner first meets it: JupyterLab in Chromium, Run All Cells.

nbval already checks each lesson's outputs as text; this checks what only a browser
shows: the widgets render, no cell shows a red error box, and a screenshot of the whole
notebook is left behind (its path is printed) for a human to read as a learner would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lab_page import (
    STDERR,
    WIDGET_VIEW,
    assert_no_errors,
    code_cells,
    open_and_run_all,
    screenshot_notebook,
    wait_until,
    wait_until_executed,
)

LESSONS = sorted((Path(__file__).resolve().parents[2] / "lessons").glob("[0-9][0-9]_*.ipynb"))
# Run All Cells takes 1-3 s per lesson here; a loaded machine (a CI run next door) needs room.
RUN_ALL_MS = 60_000


def stored_widget_views(lesson: Path) -> int:
    """How many widgets the committed lesson displays (every one a plan panel so far):
    the browser must render as many."""
    return sum(WIDGET_VIEW in output.get("data", {})
               for cell in code_cells(lesson) for output in cell["outputs"])


@pytest.mark.browser
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name[:2])
def test_lesson_runs_in_jupyterlab_without_errors(lab, browser, lesson, screenshots):
    page = open_and_run_all(lab, browser, lesson)
    try:
        wait_until_executed(page, lesson, timeout=RUN_ALL_MS)
        panels = stored_widget_views(lesson)
        wait_until(page, "n => document.querySelectorAll('.harness-plan-panel').length === n",
                   f"{panels} plan panel(s) rendering", arg=panels)
        screenshot_notebook(page, screenshots / f"{lesson.stem}.png")
        assert_no_errors(page)
        # The committed lessons print nothing to stderr: a pink box here is news.
        assert page.locator(STDERR).all_inner_texts() == []
        # Each panel shows a run: the run's updates reached the view, not just its first draw.
        panels_shown = page.locator(".harness-plan-panel").all_inner_texts()
        assert [text for text in panels_shown if "waiting for a run" in text] == []
    finally:
        page.close()
        lab.delete_sessions()
