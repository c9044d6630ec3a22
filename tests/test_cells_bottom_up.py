"""A learner goes back up: after running a lesson top to bottom, they run earlier cells
again to experiment. Every code cell of every lesson, run in order, then again from the
last cell up to the first in the same kernel, must print what it printed the first time.

A later cell that rebinds a name an earlier cell uses (``model``, ``result``, ``plan``, a
tool's name) breaks this: the earlier cell then reads the later value. Give each its own
name. A cell whose output may differ, on purpose, says so in its first line: ``# Run
again:`` (tests/test_cells_run_twice.py) or ``# Going back up:``, then what changes and
why. Outputs are compared as nbval compares them (tests/nbval_sanitize.cfg).
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest
from nbclient import NotebookClient

from tests.test_cells_run_twice import LESSONS, shown

SAYS_WHY = re.compile(r"^\s*# (Run again|Going back up):", re.I)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name[:2])
def test_every_cell_prints_the_same_when_run_again_from_the_bottom_up(lesson):
    nb = nbformat.read(lesson, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(lesson.parent)}})
    code = [(i, c) for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()]
    first, changed = {}, []
    with client.setup_kernel():
        for index, cell in code:
            client.execute_cell(cell, index)
            first[index] = shown(copy.deepcopy(cell.outputs))
        for index, cell in reversed(code):
            client.execute_cell(cell, index)
            again = shown(cell.outputs)
            if again != first[index] and not SAYS_WHY.match(cell.source):
                changed.append(f"cell {index}: first {first[index]!r:.300}\n"
                               f"   going back up {again!r:.300}")
    assert not changed, (
        f"{lesson.name}: run again from the bottom up, these cells printed something else "
        "(a later cell rebinds a name they use: give it its own name; or say why in a "
        "'# Going back up:' first line and in the text):\n" + "\n".join(changed))
