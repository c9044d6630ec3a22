"""Run harness code in a fresh Python process whose own environment holds the key.

``/proc/<pid>/environ`` shows the environment a process *started* with: a key put in
``os.environ`` by a test (monkeypatch) is not there, so an in-process test cannot show
the leak. These helpers start a new process with the key in its environment from the
start, as a person who exported ``OPENAI_API_KEY`` before ``python -m harness`` would.

`on_a_terminal` runs it on a pseudo-terminal, so `ask_on_stdin` really asks, and a
person (a function of what the screen shows so far) answers each question.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def environment(key: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": key, "PYTHONPATH": str(ROOT), **extra}


def in_a_fresh_process(code: str, key: str, **extra: str) -> str:
    """Run ``python -c code`` with the key in its starting environment; its output."""
    done = subprocess.run([sys.executable, "-c", code], env=environment(key, **extra),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def on_a_terminal(argv: list[str], key: str, person: Callable[[str], str],
                  **extra: str) -> tuple[str, list[str]]:
    """Run ``argv`` on a terminal; ``person(screen)`` answers each ``[y/N]`` question.

    Returns everything the screen showed and the answers given.
    """
    main, child_end = pty.openpty()
    proc = subprocess.Popen(argv, stdin=child_end, stdout=child_end, stderr=child_end,
                            env=environment(key, **extra))
    os.close(child_end)
    screen, answers, deadline = b"", [], time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if not select.select([main], [], [], 0.1)[0]:
                continue
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the program ended and closed the terminal
                break
            if not chunk:
                break
            screen += chunk
            if screen.count(b"[y/N] ") > len(answers):
                answers.append(person(screen.decode("utf-8", "replace")))
                os.write(main, answers[-1].encode() + b"\n")
        proc.wait(10)
    finally:
        os.close(main)
        if proc.poll() is None:
            proc.kill()
    return screen.decode("utf-8", "replace"), answers
