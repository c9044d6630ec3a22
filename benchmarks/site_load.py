"""The browser edition's cold start, against a floor site, in one run.

    python benchmarks/site_load.py                          # builds both sites first
    python benchmarks/site_load.py --site S --floor F       # sites built already
    python benchmarks/site_load.py --rounds 3               # medians of three cold starts

The floor is the same build with an empty notebook and no harness
(``scripts/build_site.py --floor``): what JupyterLite and Pyodide cost by themselves. Each
round opens each site in a fresh Chromium context (no cache, no storage, nothing outside
the site's origin reachable), floor and course in turn, so a busy machine slows both:

    floor    kernel ready: from the page's load to the kernel's first Idle
    course   first output: from the page's load, through Run All Cells on lesson 00,
             to the first output of a cell (the doctor's report)
    bytes    what the server sent for the course's cold start, up to that output (and what
             the same files weigh gzipped, for a host that compresses)
    size     the course site on disk

Held to (issue 20): first output <= 1.3 x the floor's kernel ready; cold-start bytes
<= 36 MB (aim: 25); site <= 50 MB. Needs Debian's Chromium and the playwright package.
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from lite_site import (  # noqa: E402
    StaticSite,
    build,
    launch,
    offline_context,
    open_notebook,
)

LESSON = "00_setup_and_tour.ipynb"
FIRST_OUTPUT = """() => window.jupyterapp.shell.currentWidget.content.model.toJSON().cells
    .some(c => c.cell_type === 'code' && c.outputs.length > 0)"""
MB = 1e6
RATIO, MAX_BYTES, MAX_SITE = 1.3, 36 * MB, 50 * MB


def floor_ready(browser, folder: Path) -> float:
    with StaticSite(folder) as site:
        context = offline_context(browser, site.origin)
        try:
            _, seconds = open_notebook(context, site.origin, "floor.ipynb")
        finally:
            context.close()
    return seconds


def course_first_output(browser, folder: Path) -> tuple[float, float, int, int]:
    """(kernel ready, first output, bytes sent until then, the same gzipped) for lesson 00,
    cold."""
    with StaticSite(folder) as site:
        context = offline_context(browser, site.origin)
        try:
            started = time.monotonic()
            page, ready = open_notebook(context, site.origin, LESSON)
            page.evaluate("() => window.jupyterapp.commands.execute("
                          "'notebook:clear-all-cell-outputs')")
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            page.wait_for_function(FIRST_OUTPUT, timeout=120_000, polling=50)
            first = time.monotonic() - started
            sent, files = site.sent, list(site.files)
            if context.outside:
                sys.exit(f"the course site asked for {context.outside[:3]}")
        finally:
            context.close()
    return ready, first, sent, gzipped(files)


def gzipped(files: list[str]) -> int:
    """What the same files weigh gzipped (wheels and zips are compressed already): about
    what a static host that compresses its responses sends."""
    total = 0
    for name in files:
        data = Path(name).read_bytes()
        total += len(data) if name.endswith((".whl", ".zip", ".png")) else len(
            gzip.compress(data, compresslevel=6))
    return total


def size_of(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a course site built already")
    parser.add_argument("--floor", type=Path, help="a floor site built already")
    parser.add_argument("--rounds", type=int, default=2, help="cold starts of each site")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or build(Path(tmp) / "site")
        floor = args.floor or build(Path(tmp) / "floor", floor=True)
        floors, courses = [], []
        with sync_playwright() as playwright:
            browser = launch(playwright)
            try:
                for _ in range(args.rounds):
                    floors.append(floor_ready(browser, floor))
                    courses.append(course_first_output(browser, site))
                    print(f"  round: floor ready {floors[-1]:.1f} s; course ready "
                          f"{courses[-1][0]:.1f} s, first output {courses[-1][1]:.1f} s, "
                          f"{courses[-1][2] / MB:.1f} MB", flush=True)
            finally:
                browser.close()
        site_size, floor_size = size_of(site), size_of(floor)

    floor_s = statistics.median(floors)
    first_s = statistics.median(c[1] for c in courses)
    sent = statistics.median(c[2] for c in courses)
    packed = statistics.median(c[3] for c in courses)
    ratio = first_s / floor_s
    rows = [
        ("first output / floor kernel ready", f"{first_s:.1f} s / {floor_s:.1f} s = {ratio:.2f}x",
         f"<= {RATIO}x", ratio <= RATIO),
        ("cold-start download (course)", f"{sent / MB:.1f} MB ({packed / MB:.1f} MB gzipped)",
         f"<= {MAX_BYTES / MB:.0f} MB", sent <= MAX_BYTES),
        (f"site on disk (floor: {floor_size / MB:.1f} MB)", f"{site_size / MB:.1f} MB",
         f"<= {MAX_SITE / MB:.0f} MB", site_size <= MAX_SITE),
    ]
    print(f"\nmedians of {args.rounds} cold start(s) each:")
    for name, value, target, ok in rows:
        print(f"  {name:<36} {value:<28} target {target:<9} {'ok' if ok else 'MISSED'}")
    return 0 if all(ok for *_, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
