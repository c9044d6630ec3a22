"""Re-execute lesson notebooks in place, offline, the way nbval will check them.

    python scripts/execute_notebooks.py                  # every lessons/NN_*.ipynb
    python scripts/execute_notebooks.py lessons/04_todo_write.ipynb

Provider variables are removed (lessons always record their offline run), widget state
is not stored (its ids change on every run), and each notebook runs in its own folder.
Run it after changing `harness/`, then commit the notebooks with their outputs.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from harness.live.openai_model import PROVIDER_VARIABLES

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    nb = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    client = NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=False,
                            store_widget_state=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = coalesce(cell.outputs)
    nbformat.write(nb, path)
    return time.perf_counter() - started


def coalesce(outputs: list) -> list:
    """One output per run of printing: a busy machine splits a cell's stdout in pieces."""
    merged: list = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (last is not None and output.output_type == last.output_type == "stream"
                and output.name == last.name):
            last.text += output.text
        else:
            merged.append(output)
    return merged


def main(args: list[str]) -> int:
    for name in PROVIDER_VARIABLES:
        os.environ.pop(name, None)
    paths = ([Path(a).resolve() for a in args]
             or sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb")))
    for path in paths:
        seconds = execute(path)
        print(f"{path.relative_to(ROOT)}: executed in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
