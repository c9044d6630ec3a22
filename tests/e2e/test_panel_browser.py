"""What a learner sees in JupyterLab: the plan panel after Run -> Run All Cells.

Each `PanelNotebook` names a notebook and what its (last) plan panel must show at the
end. To check another notebook, add a case to ``CASES``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from lab_page import (
    WAIT_MS,
    assert_no_errors,
    click_menu,
    open_and_run_all,
    wait_until,
    wait_until_executed,
)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


@dataclass(frozen=True)
class PanelNotebook:
    notebook: Path
    items: tuple[str, ...] = ()  # plan items the finished panel must list, all [x]
    outcome: str = "completed"
    shows: tuple[str, ...] = ()  # more text the finished panel must show


CASES = [
    PanelNotebook(NOTEBOOKS / "panel_demo.ipynb",
                  items=("Add up the March sales", "Ask a helper for the average",
                         "Report the total and the average")),
    PanelNotebook(ROOT / "lessons/07_whole_harness.ipynb",
                  items=("Find the return rule for opened in-ear headphones",
                         "Find how long a refund takes (sub-agent)",
                         "Save a draft reply in notes/reply.md"),
                  # the last panel watches the streamed replay: write_file comes from
                  # the record (no approval), the sub-agent runs again
                  shows=("↩ stop gate: answered with 1 open item, pushed back",
                         "✓ write_file: Wrote 566 characters", "└─ main.sub1",
                         "Budget: 10/50 requests")),
]


def panel_shows(page, text: str, timeout: int = WAIT_MS) -> None:
    """Wait until some panel's text includes ``text`` (the panel updates while cells run)."""
    wait_until(page, """t => [...document.querySelectorAll('.harness-plan-panel')]
                         .some(e => e.textContent.includes(t))""",
               f"a plan panel showing {text!r}", arg=text, timeout=timeout)


def screenshot_panel(page, path: Path) -> Path:
    """The last panel, as the learner sees it; the path is printed for a human to look at."""
    panel = page.locator(".harness-plan-panel").last
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=path)
    print(f"\nscreenshot: {path}")
    return path


@pytest.mark.browser
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.notebook.stem)
def test_run_all_cells_shows_the_finished_plan_panel(lab, browser, case, screenshots):
    started = time.monotonic()
    page = open_and_run_all(lab, browser, case.notebook)
    try:
        wait_until_executed(page, case.notebook)
        panel_shows(page, f"● {case.outcome}")
        screenshot_panel(page, screenshots / f"panel_{case.notebook.stem}.png")
        panel = page.locator(".harness-plan-panel").last
        text, plan = panel.inner_text(), panel.locator(".harness-plan").inner_text().splitlines()
        assert page.locator(".jupyter-widgets").count() > 0
        assert_no_errors(page)
        assert plan and all(line.startswith("[x] ") for line in plan), plan
        assert [item for item in case.items if f"[x] {item}" not in plan] == [], plan
        assert f"{len(plan)}/{len(plan)} done" in text
        assert f"Outcome: {case.outcome} after" in text
        assert [shown for shown in case.shows if shown not in text] == [], text
    finally:
        page.close()
        lab.delete_sessions()
    print(f"browser check took {time.monotonic() - started:.1f} s")


@pytest.mark.browser
def test_kernel_interrupt_shows_cancelled_and_keeps_the_plan(lab, browser, screenshots):
    notebook = NOTEBOOKS / "panel_interrupt.ipynb"
    page = open_and_run_all(lab, browser, notebook)
    try:
        panel_shows(page, "Now: main: running tool wait_for_stock")
        click_menu(page, "Kernel", "Interrupt Kernel")
        panel_shows(page, "● cancelled")
        wait_until_executed(page, notebook)
        screenshot_panel(page, screenshots / "panel_interrupt.png")
        panel = page.locator(".harness-plan-panel").last
        assert panel.locator(".harness-plan").inner_text().splitlines() == [
            "[>] Wait for the blue mug", "[ ] Tell the customer"]
        assert "interrupted (KeyboardInterrupt)" in panel.inner_text()
        assert_no_errors(page)
    finally:
        page.close()
        lab.delete_sessions()
