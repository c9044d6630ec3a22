"""What a learner sees in JupyterLab: the plan panel after Run -> Run All Cells.

Each case names a notebook and what its (last) plan panel must show at the end. To check
a lesson too, add a case, e.g. ``PanelNotebook(ROOT / "lessons/07_whole_harness.ipynb",
items=(...))``.
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


@dataclass(frozen=True)
class PanelNotebook:
    notebook: Path
    items: tuple[str, ...] = ()  # plan items the finished panel must list (all done)
    outcome: str = "completed"


CASES = [
    PanelNotebook(NOTEBOOKS / "panel_demo.ipynb",
                  items=("Add up the March sales", "Ask a helper for the average",
                         "Report the total and the average")),
]

STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'


def wait_for(page, selector: str, what: str, timeout: int = WAIT_MS):
    """Wait for a selector; fail with a sentence that says what did not happen."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return page.wait_for_selector(selector, timeout=timeout)
    except PlaywrightTimeout:
        pytest.fail(f"timed out after {timeout / 1000:.0f} s waiting for {what} ({selector})")


def wait_for_kernel(page, timeout: int = 30_000) -> None:
    """The status bar reads "<kernel name> | Idle": connected, not just "No Kernel"."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    script = """() => [...document.querySelectorAll('.jp-StatusBar-TextItem')]
        .some(e => /^(?!No Kernel).+ \\| Idle$/.test(e.textContent.trim()))"""
    try:
        page.wait_for_function(script, timeout=timeout)
    except PlaywrightTimeout:
        status = page.locator(".jp-StatusBar-TextItem").all_inner_texts()
        pytest.fail(f"the kernel was not connected and idle within {timeout / 1000:.0f} s; "
                    f"status bar: {status}")


def run_all_cells(page) -> None:
    """The learner's way: the Run menu, then Run All Cells."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def wait_until_executed(page, code_cells: int, timeout: int = WAIT_MS) -> None:
    """Every code cell shows an execution count (``[3]:``, not ``[*]:`` or ``[ ]:``)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    script = """n => {
        const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
        return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
    }"""
    try:
        page.wait_for_function(script, arg=code_cells, timeout=timeout)
    except PlaywrightTimeout:
        prompts = page.locator(".jp-CodeCell .jp-InputArea-prompt").all_inner_texts()
        pytest.fail(f"not every code cell ran within {timeout / 1000:.0f} s; prompts: {prompts}")


@pytest.mark.browser
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.notebook.stem)
def test_run_all_cells_shows_the_finished_plan_panel(lab, browser, case, tmp_path_factory):
    started = time.monotonic()
    shots = tmp_path_factory.mktemp("screenshots")
    code_cells = sum(cell["cell_type"] == "code"
                     for cell in json.loads(case.notebook.read_text(encoding="utf-8"))["cells"])
    name = lab.add_notebook(case.notebook)
    lab.delete_sessions()
    page = browser.new_page()
    try:
        page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}")
        wait_for_kernel(page)
        run_all_cells(page)
        wait_until_executed(page, code_cells)
        wait_for(page, ".harness-plan-panel", "the plan panel widget to render")
        panel = page.locator(".harness-plan-panel").last
        panel.scroll_into_view_if_needed()
        panel.screenshot(path=shots / "panel.png")
        print(f"\nscreenshot of the panel: {shots / 'panel.png'}")

        text = panel.inner_text()
        plan = panel.locator(".harness-plan").inner_text().splitlines()
        assert page.locator(".jupyter-widgets").count() > 0
        assert "Error displaying widget" not in page.locator(".jp-Notebook").inner_text()
        errors = [t for t in page.locator(STDERR).all_inner_texts() if "Traceback" in t]
        assert errors == [], f"a cell raised:\n{errors[0]}"
        assert f"● {case.outcome}" in text, f"the panel does not show {case.outcome!r}:\n{text}"
        assert plan and all(line.startswith("[x] ") for line in plan), plan
        assert [item for item in case.items if f"[x] {item}" not in plan] == [], plan
        assert f"{len(plan)}/{len(plan)} done" in text
    finally:
        page.screenshot(path=shots / "notebook.png", full_page=True)
        print(f"\nscreenshot of the notebook: {shots / 'notebook.png'}")
        page.close()
        lab.delete_sessions()
    print(f"browser check took {time.monotonic() - started:.1f} s")
