"""The browser edition: the same harness in a JupyterLite tab (Pyodide), where Python
can start neither a thread nor a process.

    IN_BROWSER     True in a browser tab (``sys.platform == "emscripten"``)

Where the harness would wait on a thread it works inline instead, and checks cancel and
the deadline between chunks and steps: a model request and a tool's result turned into
text (waiting/), a streamed reply (live/stream_reader.py), the panel's trailing redraw
(ui/throttle.py). Where it would start a process, the tool says it cannot, and the
model reads why (workspace/process.py). The places read ``browser.IN_BROWSER`` when
they run, so a test sets it to walk this path under CPython.
"""

from __future__ import annotations

import sys

IN_BROWSER = sys.platform == "emscripten"
