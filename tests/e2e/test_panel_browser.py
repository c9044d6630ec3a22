"""What a learner sees in JupyterLab: the plan panel after Run -> Run All Cells.

Each `PanelNotebook` names a notebook and what its (last) plan panel must show at the
end. To check another notebook, add a case to ``CASES``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
WAIT_MS = 20_000
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


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
                  shows=("↩ stop gate: answered with 1 open item, pushed back",
                         "✓ approved: write_file", "└─ main.sub1")),
]


def _timeout_error():
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    return PlaywrightTimeout


def wait_until(page, script: str, what: str, arg=None, timeout: int = WAIT_MS) -> None:
    """Wait for a JavaScript condition; fail with a sentence that says what did not happen."""
    try:
        page.wait_for_function(script, arg=arg, timeout=timeout)
    except _timeout_error():
        status = page.locator(".jp-StatusBar-TextItem").all_inner_texts()
        pytest.fail(f"{what} did not happen within {timeout / 1000:.0f} s "
                    f"(status bar: {[s for s in status if s.strip()]})")


def click_menu(page, menu: str, item: str) -> None:
    """The learner's way: a menu of the menu bar, then one of its items."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).click()


def panel_shows(page, text: str, timeout: int = WAIT_MS) -> None:
    """Wait until some panel's text includes ``text``. textContent, not innerText: JupyterLab
    skips rendering the cells out of view (content-visibility), and a skipped cell has no
    innerText, so a panel high up in a long lesson would never seem to finish."""
    wait_until(page, """t => [...document.querySelectorAll('.harness-plan-panel')]
                         .some(e => e.textContent.includes(t))""",
               f"a plan panel showing {text!r}", arg=text, timeout=timeout)


def open_and_run_all(lab, browser, notebook: Path):
    """Open a copy of the notebook, wait for its kernel, then Run -> Run All Cells."""
    lab.delete_sessions()
    name = lab.add_notebook(notebook)
    page = browser.new_page()
    # A workspace of its own, so JupyterLab does not reopen the notebooks of earlier tests.
    page.goto(f"{lab.url}/lab/workspaces/{notebook.stem}/tree/{name}?token={lab.token}")
    # "No Kernel | Idle" comes first: wait for the real kernel's name next to Idle.
    wait_until(page, """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                         .some(e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim()))""",
               "the notebook's kernel starting and going idle", timeout=30_000)
    click_menu(page, "Run", "Run All Cells")
    return page


def wait_until_executed(page, notebook: Path) -> None:
    """Every code cell shows an execution count (``[3]:``, not ``[*]:`` or ``[ ]:``)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    wait_until(page, """n => {
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
        return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
    }""", "every code cell running to the end",
               arg=sum(cell["cell_type"] == "code" for cell in cells))


def assert_no_errors(page) -> None:
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    errors = [t for t in page.locator(STDERR).all_inner_texts() if "Traceback" in t]
    assert errors == [], f"a cell raised:\n{errors[0]}"


def screenshot(page, folder: Path, name: str) -> Path:
    """The last panel, as the learner sees it; the path is printed for a human to look at."""
    panel = page.locator(".harness-plan-panel").last
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=folder / name)
    print(f"\nscreenshot: {folder / name}")
    return folder / name


@pytest.mark.browser
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.notebook.stem)
def test_run_all_cells_shows_the_finished_plan_panel(lab, browser, case, tmp_path_factory):
    started = time.monotonic()
    page = open_and_run_all(lab, browser, case.notebook)
    try:
        wait_until_executed(page, case.notebook)
        panel_shows(page, f"● {case.outcome}")
        screenshot(page, tmp_path_factory.mktemp("screenshots"), f"{case.notebook.stem}.png")
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
def test_kernel_interrupt_shows_cancelled_and_keeps_the_plan(lab, browser, tmp_path_factory):
    notebook = NOTEBOOKS / "panel_interrupt.ipynb"
    page = open_and_run_all(lab, browser, notebook)
    try:
        panel_shows(page, "Now: main: running tool wait_for_stock")
        click_menu(page, "Kernel", "Interrupt Kernel")
        panel_shows(page, "● cancelled")
        wait_until_executed(page, notebook)
        screenshot(page, tmp_path_factory.mktemp("screenshots"), "panel_interrupt.png")
        panel = page.locator(".harness-plan-panel").last
        assert panel.locator(".harness-plan").inner_text().splitlines() == [
            "[>] Wait for the blue mug", "[ ] Tell the customer"]
        assert "interrupted (KeyboardInterrupt)" in panel.inner_text()
        assert_no_errors(page)
    finally:
        page.close()
        lab.delete_sessions()
