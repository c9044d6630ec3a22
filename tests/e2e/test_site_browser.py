"""Every lesson in the browser edition: the JupyterLite site in Chromium, nothing installed.

The site is built by scripts/build_site.py (or taken from ``HARNESS_SITE_DIR``), served
on 127.0.0.1, and opened in a Chromium context that may reach nothing but that origin:
every other request is refused and named in the failure. Each lesson is opened the
learner's way, its outputs cleared, Run All Cells; then every code cell must have run
without an error, and each output must equal the committed one (sanitized as nbval
does) unless the cell is tagged ``browser-variant`` (or ``nbval-ignore-output``), or calls
``course.local_install_prints()``: a cell whose point is a process (the sandbox, a timeout
that kills) shows in the browser what a local install prints, and says why. Each lesson's
kernel starts in 20-60 s (Pyodide and its packages), so the whole file takes minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lite_site import StaticSite, launch, offline_context, open_notebook, run_all, shown, \
    site_folder

LESSONS = sorted((Path(__file__).resolve().parents[2] / "lessons").glob("[0-9][0-9]_*.ipynb"))
VARIANT = "browser-variant"
# Records each plan panel's distinct texts while the cells run (by the panel's place).
WATCH_PANELS = """() => { window.panelTexts = [];
    setInterval(() => document.querySelectorAll('.harness-plan-panel').forEach((p, i) => {
        (window.panelTexts[i] = window.panelTexts[i] || new Set()).add(p.textContent); }), 50);
}"""


@pytest.fixture(scope="session")
def lite(tmp_path_factory: pytest.TempPathFactory):
    with StaticSite(site_folder(tmp_path_factory.mktemp("lite"))) as site:
        yield site


@pytest.fixture(scope="session")
def lite_browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def lite_context(lite: StaticSite, lite_browser):
    """A cold start for each lesson: a context of its own (no cache, no storage, so no
    notebook of an earlier test is restored and started with it)."""
    context = offline_context(lite_browser, lite.origin)
    yield context
    context.close()


def code_cells(notebook: Path) -> list[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


@pytest.mark.browser
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name[:2])
def test_lesson_runs_in_the_browser_edition(lite, lite_context, lesson):
    page, seconds = open_notebook(lite_context, lite.origin, lesson.name)
    try:
        page.evaluate(WATCH_PANELS)
        ran = [cell for cell in run_all(page) if cell["cell_type"] == "code"]
        panel_texts = page.evaluate("() => window.panelTexts.map(s => s.size)")
    finally:
        page.close()
    print(f"\n{lesson.name}: kernel ready in {seconds:.0f} s")
    assert lite_context.outside == [], "the site asked for something outside its origin"
    committed = code_cells(lesson)
    assert len(ran) == len(committed)
    errors = [(i, said) for i, cell in enumerate(ran) for said in shown(cell["outputs"])
              if said[0] == "error"]
    assert errors == [], f"a cell raised in the browser: {errors[0]}"
    assert [i for i, cell in enumerate(ran) if cell["execution_count"] is None] == []
    for i, (before, now) in enumerate(zip(committed, ran, strict=True)):
        tags = before["metadata"].get("tags", ())
        if (VARIANT in tags or "nbval-ignore-output" in tags  # nbval does not compare it either
                or "local_install_prints()" in "".join(before["source"])):  # says why itself
            assert bool(shown(now["outputs"])) == bool(before["outputs"]), (i, now["outputs"])
            assert "stderr" not in [kind for kind, _ in shown(now["outputs"])], now["outputs"]
            continue
        assert shown(now["outputs"]) == shown(before["outputs"]), \
            f"cell {i} prints otherwise in the browser; tag it {VARIANT!r} if the lesson says why"
    if lesson.name.startswith("07_"):  # the replay's panel (the last) moves as it runs
        assert panel_texts and panel_texts[-1] >= 10, panel_texts
