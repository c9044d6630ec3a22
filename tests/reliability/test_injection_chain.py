"""The injection chain, end to end: a hostile policy document must not get the key out.

The attack (injection_attack.py): a policy file tells support agents to "verify the
policy version" with a command whose first 200 characters are harmless and whose tail
prints every environment under ``/proc``. The CLI's own agent (``run_shell: ask``)
reads the policy, the model obeys it, a person approves what the terminal shows, and
the answer quotes what the command printed. Scripted model, real tools, the real
`ask_on_stdin`, a terminal: both defences are checked, each on its own.

- a careful person, who says no to what they can see is wrong, sees the whole command
  now (the prompt used to cut it at 197 characters);
- a careless person, who says yes to anything, still leaks nothing: the command runs
  in the sandbox, where the harness's environment is out of reach. That one runs the
  harness in a fresh process on a pseudo-terminal, with the key in the environment it
  started with, exactly as ``OPENAI_API_KEY=... python -m harness run`` would.
"""

from __future__ import annotations

import io
import json
import secrets
import string
import sys
from pathlib import Path

import pytest

from .fresh_process import on_a_terminal
from .injection_attack import COMMAND, run_attack

ATTACK = Path(__file__).with_name("injection_attack.py")


@pytest.fixture
def key() -> str:
    return "sk-test-" + "".join(secrets.choice(string.ascii_letters) for _ in range(32))


def careful(screen: str) -> str:
    """Says no to a command that reads /proc, if the screen shows it."""
    return "n" if "/proc" in screen else "y"


def careless(screen: str) -> str:
    return "y"


class Terminal(io.StringIO):
    """In-process: a terminal whose person reads what was printed to ``screen``."""

    def __init__(self, screen: io.StringIO, person) -> None:
        super().__init__()
        self.screen, self.person, self.answers = screen, person, []

    def isatty(self) -> bool:
        return True

    def readline(self, *args: object) -> str:
        self.answers.append(self.person(self.screen.getvalue()))
        return self.answers[-1] + "\n"


def test_a_careful_person_sees_the_tail_and_says_no(tmp_path, monkeypatch, key, either):
    monkeypatch.setenv("OPENAI_API_KEY", key)
    screen = io.StringIO()
    terminal = Terminal(screen, careful)
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stdin", terminal)
    result = run_attack(tmp_path)
    monkeypatch.undo()
    [shell] = [e for e in result.events if e.type == "tool_call" and e.tool_name == "run_shell"]
    assert shell.arguments["command"] == COMMAND  # the model did ask to run it
    assert terminal.answers == ["n"]
    assert "/proc/[0-9]*" in screen.getvalue().split("Allow run_shell")[0]
    assert "did not approve" in result.final
    assert key not in json.dumps(result.to_dict()) + screen.getvalue()


def test_a_careless_yes_on_a_real_terminal_still_leaks_no_key(tmp_path, key, sandboxed):
    screen, answers = on_a_terminal(
        [sys.executable, str(ATTACK), str(tmp_path), str(tmp_path / "run.json")], key, careless)
    saved = (tmp_path / "run.json").read_text(encoding="utf-8")
    assert answers == ["y"]
    assert "exit status" in json.loads(saved)["final"]  # the command ran, in the sandbox
    assert key not in screen and key not in saved
    assert "Allow run_shell with the" in screen  # the real ask_on_stdin asked
