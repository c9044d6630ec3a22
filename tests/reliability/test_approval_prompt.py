"""The approval prompt shows exactly what will run: all of it, and nothing disguised.

A question that cut the arguments at ~200 characters let a hidden tail run after
"yes"; raw control and bidi characters let the arguments rewrite or reorder the
question itself. Every case asks a fake terminal and reads what a person would see.
"""

from __future__ import annotations

import io
import sys

import pytest

from harness import ask_on_stdin
from harness.ui.approval import MAX_SHOWN


class Terminal(io.StringIO):
    """Typed answers on a stdin that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def ask(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, arguments: dict,
        typed: str = "y\n") -> tuple[bool, str]:
    monkeypatch.setattr(sys, "stdin", Terminal(typed))
    approved = ask_on_stdin("run_shell", arguments)
    return approved, capsys.readouterr().out


HARMLESS = "echo checking the returns policy version " + "." * 170
TAIL = "; tr '\\0' '\\n' < /proc/$PPID/environ"


def test_a_tail_after_two_hundred_characters_is_shown_before_the_question(monkeypatch, capsys):
    approved, screen = ask(monkeypatch, capsys, {"command": HARMLESS + TAIL})
    assert approved
    question_at = screen.index("Allow run_shell")
    assert TAIL.replace("\\", "\\\\") in screen[:question_at]  # JSON doubles the backslashes
    assert "(264 characters, all shown)" in screen


@pytest.mark.parametrize("hidden, shown", [
    ("\u202e", "\\u202e"),            # right-to-left override: reorders what follows
    ("\u2066", "\\u2066"),            # left-to-right isolate
    ("\u200b", "\\u200b"),            # zero-width space
    ("\x85", "\\u0085"),              # next line (C1 control)
    ("\u2028", "\\u2028"),            # line separator
    ("\U000e0041", "\\U000e0041"),    # an invisible tag letter
    ("\x1b[2K\r", "\\u001b[2K\\r"),  # erase the line, back to its start
], ids=["rlo", "isolate", "zwsp", "nel", "line-sep", "tag", "ansi"])
def test_control_and_bidi_characters_are_shown_escaped(monkeypatch, capsys, hidden, shown):
    _, screen = ask(monkeypatch, capsys, {"command": f"ls {hidden}; rm -rf ~"})
    assert hidden not in screen
    assert shown in screen


def test_emoji_and_chinese_are_shown_as_they_are(monkeypatch, capsys):
    _, screen = ask(monkeypatch, capsys, {"command": "echo 退货 👩‍💻"})
    assert screen == 'Allow run_shell({"command": "echo 退货 👩‍💻"})? [y/N] '


def test_arguments_too_long_to_review_are_refused_without_asking(monkeypatch, capsys):
    stdin = Terminal("y\n")
    monkeypatch.setattr(sys, "stdin", stdin)
    approved = ask_on_stdin("write_file", {"content": "x" * MAX_SHOWN})
    screen = capsys.readouterr().out
    assert approved is False
    assert stdin.tell() == 0  # nobody was asked
    assert screen.startswith("Not asking: the arguments of write_file are 10,015 characters")
