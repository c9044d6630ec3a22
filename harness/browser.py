"""The browser edition (JupyterLite, Pyodide): no thread, no process. Where the harness would
wait on a thread it works inline, checking cancel and the deadline between steps; where it
would start a process, the tool says it cannot. The places read ``IN_BROWSER`` when they run,
so a test sets it to walk this path under CPython."""

import sys

IN_BROWSER = sys.platform == "emscripten"
