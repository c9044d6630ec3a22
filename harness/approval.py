"""Asking a person: ``Allow write_file({...})? [y/N]``, the approver for ``"ask"``.

    Permissions({"write_file": "ask"}, approve=ask_on_stdin)

It asks in a terminal (stdin is a tty) or in a Jupyter kernel (the notebook shows an
input box). Anything else (a pipe, a file, CI, nbval) is answered "no" without reading:
an unattended run never hangs on the question.
"""

from __future__ import annotations

import json
import sys


def ask_on_stdin(tool_name: str, arguments: dict) -> bool:
    """Ask the person at the keyboard: ``Allow shell({...})? [y/N]``. No one there means no.

    It asks in a terminal (stdin is a tty) or in a Jupyter kernel (the notebook shows an
    input box). Anything else (a pipe, a file, CI) is answered "no" without reading, and
    so is a kernel that cannot ask (nbval runs with input switched off): an unattended
    run never hangs on the question.
    """
    if not (_stdin_is_tty() or _in_kernel()):
        return False
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > 200:
        shown = shown[:197] + "..."
    try:
        answer = input(f"Allow {tool_name}({shown})? [y/N] ")
    except (EOFError, OSError, RuntimeError):  # no stdin, or a kernel that cannot ask
        return False
    return answer.strip().lower() in ("y", "yes")


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):  # replaced by an object without isatty, or closed
        return False


def _in_kernel() -> bool:
    """True inside a running Jupyter kernel (merely importing ipykernel does not count)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None) is not None
