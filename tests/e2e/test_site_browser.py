"""Every lesson in the browser edition: the JupyterLite site in Chromium, nothing installed.

The site is built by scripts/build_site.py (or taken from ``HARNESS_SITE_DIR``), served
on 127.0.0.1, and opened in a Chromium context that may reach nothing but that origin:
every other request is refused and named in the failure. Each lesson is opened the
learner's way, its outputs cleared, Run All Cells; then every code cell must have run
without an error, and each output must equal the committed one (sanitized as nbval
does) unless the cell is tagged ``browser-variant`` (or ``nbval-ignore-output``), or calls
``course.local_install_prints()``: a cell whose point is a process (the sandbox, a timeout
that kills) shows in the browser what a local install prints, and says why. Each lesson's
kernel starts in 20-60 s (Pyodide and its packages), so the lessons run two at a time,
once, before the first test looks (``lesson_runs``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lite_site import LessonRun, StaticSite, launch, run_lessons, shown, site_folder

LESSONS = sorted((Path(__file__).resolve().parents[2] / "lessons").glob("[0-9][0-9]_*.ipynb"))
VARIANT = "browser-variant"


@pytest.fixture(scope="session")
def lite(tmp_path_factory: pytest.TempPathFactory):
    with StaticSite(site_folder(tmp_path_factory.mktemp("lite"))) as site:
        yield site


@pytest.fixture(scope="session")
def lesson_runs(lite: StaticSite, playwright_session,
                request: pytest.FixtureRequest) -> dict[str, LessonRun]:
    """Every selected lesson, run once in the site (two at a time), before the first test
    looks: each from a cold start of its own (a fresh context: no cache, no storage)."""
    names = [item.callspec.params["lesson"].name for item in request.session.items
             if item.originalname == "test_lesson_runs_in_the_browser_edition"]
    browser = launch(playwright_session)
    try:
        return run_lessons(browser, lite.origin, names)
    finally:
        browser.close()


def code_cells(notebook: Path) -> list[dict]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


@pytest.mark.browser
@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.name[:2])
def test_lesson_runs_in_the_browser_edition(lesson_runs, lesson):
    run = lesson_runs[lesson.name]
    print(f"\n{lesson.name}: kernel ready in {run.kernel_seconds or 0:.0f} s")
    assert run.problem is None, run.problem
    assert run.outside == [], "the site asked for something outside its origin"
    ran = [cell for cell in run.cells if cell["cell_type"] == "code"]
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
        assert run.panel_texts and run.panel_texts[-1] >= 10, run.panel_texts
