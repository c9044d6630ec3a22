"""Driving a notebook page in JupyterLab the learner's way, for every browser test here.

Open a copy of a notebook, wait for its kernel, Run -> Run All Cells, wait until every
code cell has run, look for errors, take a screenshot. Playwright is imported only
inside functions: the main suite imports the test modules without it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

WAIT_MS = 20_000
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SCROLLER = ".jp-NotebookPanel-notebook .jp-WindowedPanel-outer"


def wait_until(page, script: str, what: str, arg=None, timeout: int = WAIT_MS) -> None:
    """Wait for a JavaScript condition; fail with a sentence that says what did not happen."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(script, arg=arg, timeout=timeout)
    except PlaywrightTimeout:
        status = page.locator(".jp-StatusBar-TextItem").all_inner_texts()
        pytest.fail(f"{what} did not happen within {timeout / 1000:.0f} s "
                    f"(status bar: {[s for s in status if s.strip()]})")


def click_menu(page, menu: str, item: str) -> None:
    """The learner's way: a menu of the menu bar, then one of its items."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).click()


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


def code_cells(notebook: Path) -> list[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


def wait_until_executed(page, notebook: Path, timeout: int = WAIT_MS) -> None:
    """Every code cell shows an execution count (``[3]:``, not ``[*]:`` or ``[ ]:``).

    A traceback ends the wait early: Run All Cells stops at a failing cell, so the
    cells below it would never get a count, and the caller's error check says more.
    """
    wait_until(page, """([n, stderr]) => {
        const failed = [...document.querySelectorAll(stderr)]
            .some(e => e.textContent.includes('Traceback'));
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
        return failed || (prompts.length === n
                          && prompts.every(p => /\\[\\d+\\]/.test(p.textContent)));
    }""", "every code cell running to the end", arg=[len(code_cells(notebook)), STDERR],
               timeout=timeout)


def assert_no_errors(page) -> None:
    assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
    errors = [t for t in page.locator(STDERR).all_inner_texts() if "Traceback" in t]
    assert errors == [], f"a cell raised:\n{errors[0]}"


def fit_notebook_in_window(page) -> None:
    """Grow the window until the notebook's panel shows every cell without scrolling.

    Growing can add a few pixels (an output loses its scrollbar), hence the second look.
    """
    for _ in range(3):
        scroll_height, client_height = page.evaluate(
            "s => [document.querySelector(s).scrollHeight, document.querySelector(s).clientHeight]",
            SCROLLER)
        hidden = scroll_height - client_height
        if hidden <= 0:
            return
        viewport = page.viewport_size
        page.set_viewport_size({"width": viewport["width"], "height": viewport["height"] + hidden})
        wait_until(page, "([s, h]) => document.querySelector(s).clientHeight === h",
                   "the notebook filling the enlarged window",
                   arg=[SCROLLER, client_height + hidden])
    pytest.fail("the notebook kept growing with the window")


def screenshot_notebook(page, path: Path) -> Path:
    """The whole notebook in one image, top to bottom, at the page's width.

    The notebook scrolls inside its own panel, so Playwright's ``full_page`` would show
    only one screen: the window grows to fit it, then returns to its size. The path is
    printed for a human to look at.
    """
    viewport = page.viewport_size
    fit_notebook_in_window(page)
    page.screenshot(path=path)
    page.set_viewport_size(viewport)
    print(f"\nscreenshot: {path}")
    return path
