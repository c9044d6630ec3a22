"""Asking a person: ``Allow write_file({...})? [y/N]``, the approver for ``"ask"``.

    Permissions({"write_file": "ask"}, approve=ask_on_stdin)

It asks in a terminal (stdin is a tty) or in a Jupyter kernel (the notebook shows an
input box). Anything else (a pipe, a file, CI, nbval) is answered "no" without reading:
an unattended run never hangs on the question.

What is approved is shown whole: a question that cut the arguments short would let a
hidden tail run after "yes". Control characters (an escape sequence can rewrite the
line above) and bidirectional controls (they reorder what you read) are shown escaped,
``\\u202e``; long arguments are shown in full with their length, and arguments too
long to review are refused without asking.
"""

from __future__ import annotations

import json
import sys

from .display import escape

ONE_LINE = 200          # up to this many characters, the question fits on one line
MAX_SHOWN = 10_000      # longer than this, nobody reviews it at a prompt: refused


def ask_on_stdin(tool_name: str, arguments: dict) -> bool:
    """Ask the person at the keyboard: ``Allow run_shell({...})? [y/N]``. No one there means no.

    It asks in a terminal (stdin is a tty) or in a Jupyter kernel (the notebook shows an
    input box). Anything else (a pipe, a file, CI) is answered "no" without reading, and
    so is a kernel that cannot ask (nbval runs with input switched off): an unattended
    run never hangs on the question.
    """
    if not (_stdin_is_tty() or _in_kernel()):
        return False
    name, shown = escape(tool_name), escape(json.dumps(arguments, ensure_ascii=False))
    if len(shown) > MAX_SHOWN:
        print(f"Not asking: the arguments of {name} are {len(shown):,} characters, too long "
              f"to review here (at most {MAX_SHOWN:,}). Refused.")
        return False
    if len(shown) <= ONE_LINE:
        question = f"Allow {name}({shown})? [y/N] "
    else:
        print(f"{name} asks to run with these arguments ({len(shown):,} characters, "
              f"all shown):\n{shown}")
        question = f"Allow {name} with the {len(shown):,} characters above? [y/N] "
    try:
        answer = input(question)
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
