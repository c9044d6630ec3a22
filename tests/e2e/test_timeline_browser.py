"""Lesson 08's timeline in the browser edition: the picture is drawn in the page (an SVG
JupyterLab shows), and its text is the one the committed notebook holds.

The site is built by scripts/build_site.py (or taken from ``HARNESS_SITE_DIR``), served on
127.0.0.1, and lesson 08 is run the learner's way in a Chromium context that may reach
nothing else. The screenshot of the picture lands in the run's screenshot folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lite_site import (
    FINISHED,
    NOTEBOOK,
    StaticSite,
    launch,
    offline_context,
    open_notebook,
    site_folder,
)

LESSON = Path(__file__).resolve().parents[2] / "lessons" / "08_reading_a_run.ipynb"
SVG = "image/svg+xml"


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory):
    with StaticSite(site_folder(tmp_path_factory.mktemp("lite"))) as site:
        yield site


def timeline_outputs(cells: list[dict]) -> list[dict]:
    return [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])
            if SVG in o.get("data", {})]


def joined(value: object) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


@pytest.mark.browser
def test_lesson_08_draws_the_timeline_in_the_browser_edition(lite, playwright_session,
                                                             screenshots):
    committed = timeline_outputs(json.loads(LESSON.read_text(encoding="utf-8"))["cells"])
    browser = launch(playwright_session)
    try:
        context = offline_context(browser, lite.origin)
        page, _ = open_notebook(context, lite.origin, LESSON.name)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(FINISHED, timeout=300_000)
        cells = page.evaluate(f"() => {NOTEBOOK}.content.model.toJSON().cells")
        drawn = timeline_outputs(cells)
        picture = page.locator(".jp-RenderedSVG img").first
        picture.scroll_into_view_if_needed()
        size = picture.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
        path = screenshots / "timeline_lesson_08.png"
        picture.screenshot(path=path)
        print(f"\nscreenshot: {path}")
        outside = list(context.outside)
    finally:
        browser.close()

    assert outside == [], "the site asked for something outside its origin"
    assert len(committed) == len(drawn) == 1
    assert 'class="harness-timeline"' in joined(drawn[0]["data"][SVG])
    assert joined(drawn[0]["data"]["text/plain"]) == joined(committed[0]["data"]["text/plain"])
    assert size[0] >= 700 and size[1] >= 300, size  # drawn, at a size a learner can read
