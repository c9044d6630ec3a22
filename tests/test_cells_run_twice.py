"""A learner presses Shift+Enter twice: every code cell of every lesson, run twice in a
row in one kernel, must print the same both times.

A cell whose output may change when it runs again says so in its first line, with a
comment that starts ``# Run again:`` and says what changes and why; the lesson's text
says it too. Outputs are compared as nbval compares them (tests/nbval_sanitize.cfg:
addresses, durations and temporary paths are masked).
"""

from __future__ import annotations

import configparser
import copy
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
LESSONS = sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
SAYS_IT_CHANGES = re.compile(r"^\s*# Run again:", re.I)


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / "tests" / "nbval_sanitize.cfg", encoding="utf-8")
    return [(re.compile(config[s]["regex"]), config[s]["replace"]) for s in config.sections()]


SANITIZE = _sanitizers()


def shown(outputs: list) -> list[str]:
    """The text of each output, as nbval compares it: a stream's pieces joined (how a print
    is cut into messages varies), errors as their name and value."""
    texts, last_stream = [], None
    for out in outputs:
        if out["output_type"] == "stream":
            text = "".join(out["text"]) if isinstance(out["text"], list) else out["text"]
            if last_stream == out["name"]:
                texts[-1] += text
                continue
            last_stream = out["name"]
            texts.append(text)
            continue
        if out["output_type"] == "error":
            text = f"{out['ename']}: {out['evalue']}"
        else:
            text = out.get("data", {}).get("text/plain", "")
        last_stream = None
        texts.append("".join(text) if isinstance(text, list) else text)
    for pattern, replace in SANITIZE:
        texts = [pattern.sub(replace, text) for text in texts]
    return texts


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.name[:2])
def test_every_cell_prints_the_same_when_run_twice(lesson):
    nb = nbformat.read(lesson, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(lesson.parent)}})
    changed = []
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            client.execute_cell(cell, index)
            first = shown(copy.deepcopy(cell.outputs))
            client.execute_cell(cell, index)
            second = shown(cell.outputs)
            if first != second and not SAYS_IT_CHANGES.match(cell.source):
                changed.append(f"cell {index}: first {first!r:.300}\n   then {second!r:.300}")
    assert not changed, (f"{lesson.name}: run twice, these cells printed something else the "
                         "second time (fix the cell, or say why in a '# Run again:' first "
                         "line and in the text):\n" + "\n".join(changed))
