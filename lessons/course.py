"""Small helpers the lesson notebooks share: showing messages, source, live switch, checks.

Nothing here is part of the harness: it only makes the lessons easier to read.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import textwrap
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import harness
from harness.browser import IN_BROWSER as IN_BROWSER  # re-exported: True in the browser edition

# The lessons print harness.workspace.sandbox.status() where it matters (lesson 02); the one-time
# warning a machine without a sandbox gets would only differ from machine to machine.
warnings.filterwarnings("ignore", message="harness: sandbox")

LOCAL_OUTPUTS = "local_outputs.json"  # the site build writes it next to the lessons
PROGRAM = "its point is a program the harness starts, and a browser tab cannot start one"
LOCAL_NOTE = "In the browser edition this cell does not run: {reason}. A local install prints:"
_reasons: list[str] = []  # the reason `needs_package` gives, while its block runs


@contextlib.contextmanager
def needs_package(name: str) -> Iterator[None]:
    """For a cell that cannot run in the browser because a package is missing there (not
    because it starts a program): ``with needs_package("DBOS"): local_install_prints()``."""
    _reasons.append(f"it needs {name}, a package the browser edition does not have")
    try:
        yield
    finally:
        _reasons.pop()


def cell_key(source: str) -> str:
    """A cell's key in local_outputs.json: the hash of its source (scripts/build_site.py)."""
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()[:16]


def local_install_prints(reason: str | None = None) -> None:
    """For a cell that cannot run in the browser edition: say why (``reason``; by default,
    inside ``needs_package``, the package; else `PROGRAM`), and print what it prints on a
    local install (its committed output, which the site build saved in local_outputs.json).
    No shell is faked. The site build finds these cells by the text
    ``local_install_prints()``: give a reason with ``needs_package``, so the call keeps it."""
    from IPython import get_ipython

    source = get_ipython().user_ns["In"][-1]  # this cell, as it runs
    try:
        with open(LOCAL_OUTPUTS, encoding="utf-8") as f:
            printed = json.load(f).get(cell_key(source))
    except OSError:
        printed = None
    reason = reason or (_reasons[-1] if _reasons else PROGRAM)
    print(_wrap(LOCAL_NOTE.format(reason=reason)))
    print(printed if printed is not None else
          "(this cell was edited: its local output is in the lesson as published)")


LIVE_HINT = ("set HARNESS_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY for your provider), "
             "restart the kernel, and run this cell again")


def live_model() -> Any:
    """An `OpenAIModel` when ``HARNESS_MODEL`` is set, else ``None`` (the offline default)."""
    if not os.environ.get("HARNESS_MODEL"):
        return None
    return harness.OpenAIModel()


def skip_live() -> bool:
    """True (and says why) when no live model is configured; use it to guard live cells."""
    if os.environ.get("HARNESS_MODEL"):
        return False
    print("Skipped: no live model is configured.")
    print(_wrap(f"To run this cell live, {LIVE_HINT}."))
    return True


WIDTH = 96  # JupyterLab shows about 100 characters of output before it wraps a line


def show_text(text: str, indent: str = "") -> None:
    """Print text wrapped at word boundaries, keeping its own line breaks."""
    print(_wrap(str(text), indent))


def _wrap(text: str, indent: str = "", hanging: str | None = None) -> str:
    hanging = indent if hanging is None else hanging
    lines = []
    for line in text.splitlines() or [""]:
        lines.append(textwrap.fill(line, WIDTH, initial_indent=indent, subsequent_indent=hanging,
                                   break_on_hyphens=False, replace_whitespace=False)
                     if line.strip() else indent.rstrip())
    return "\n".join(lines)


def show_source(obj: Any) -> None:
    """Print the source of a harness function or class, so the text cannot drift from it."""
    print(textwrap.dedent(inspect.getsource(obj)).rstrip())


def _short(text: Any, limit: int) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show_messages(messages: list[dict], limit: int = 300) -> None:
    """Print a transcript the way the model receives it: one block per message."""
    for i, msg in enumerate(messages):
        role = msg["role"]
        head = f"[{i}] {role}"
        if role == "tool":
            head += f" (answers {msg['tool_call_id']})"
        print(head)
        if msg.get("content") is not None:
            print(_wrap(_short(msg["content"], limit), "    "))
        for call in msg.get("tool_calls") or ():
            fn = call["function"]
            line = f"-> {fn['name']}({_short(fn['arguments'], limit)})  id={call['id']}"
            print(_wrap(line, "    ", "       "))


def show_request(request: dict, limit: int = 300) -> None:
    """Print one request a `ScriptedModel` received: tool names, tool_choice, messages."""
    names = [t["function"]["name"] for t in request["tools"]]
    print(_wrap(f"tools: {', '.join(names) or '(none)'}", "", "       "))
    print(f"tool_choice: {json.dumps(request['tool_choice'])}")
    show_messages(request["messages"], limit)


SHOWN = {  # the fields worth seeing, per event type; any other type shows all its fields
    "run_start": ("task",),
    "model_request": ("turn", "tool_choice", "purpose"),
    "tool_call": ("call_id", "tool_name", "arguments"),
    "tool_result": ("call_id", "tool_name", "status", "output"),
    "stop": ("final", "open_items"),
    "run_end": ("outcome", "turns", "final", "error"),
    "subagent_start": ("child_id", "task"),
    "subagent_end": ("child_id", "outcome", "tool_calls", "answer"),
    "plan_update": ("added", "removed", "status_changes"),
    "reminder": ("rounds",),
    "stop_gate": ("open_items",),
}
HIDDEN_FIELDS = ("message", "usage", "todos", "seconds", "limits")  # long, or vary by run


def _value(value: Any, limit: int = 50) -> str:
    """A field's value on one line, cut at a word boundary if it is long."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split()) if isinstance(value, str) else text
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = max(cut.rfind(" "), cut.rfind(","))
    return (cut[: space] if space > limit // 2 else cut).rstrip(" ,") + "…"


def _event_fields(event: Any) -> str:
    if event.type == "model_reply":  # the message is long: say what the model did
        msg = event.message
        calls = [c["function"]["name"] for c in msg.get("tool_calls") or ()]
        return f"calls {', '.join(calls)}" if calls else f"says {_value(msg['content'])}"
    names = SHOWN.get(event.type) or [k for k in event.data if k not in HIDDEN_FIELDS]
    return ", ".join(f"{k}={_value(event.data[k])}" for k in names
                     if event.data.get(k) not in (None, [], ""))


def show_events(events: list, types: tuple[str, ...] = ()) -> None:
    """Print events one per line (only ``types`` if given), indented by depth.

    Each event shows the fields that tell its story (``SHOWN``); a long value is cut at a
    word, and a line too long for the notebook wraps instead of being cut.
    """
    for event in events:
        if not types or event.type in types:
            head = f"{'    ' * event.depth}{event.type:<15} {event.agent_id:<9} "
            print(textwrap.fill(_event_fields(event), WIDTH, initial_indent=head,
                                subsequent_indent=" " * len(head), break_on_hyphens=False,
                                break_long_words=False))


def check(judge: Callable[..., str]) -> Callable[..., bool]:
    """Wrap an exercise judge: print PASS or a hint, return a bool, never raise.

    The judge raises ``AssertionError(hint)`` when the learner's code misbehaves and
    returns a short success message otherwise.
    """
    @functools.wraps(judge)
    def run(*args: Any, **kwargs: Any) -> bool:
        try:
            message = judge(*args, **kwargs)
        except NotImplementedError:
            print("Not yet: the exercise is not done (it still raises NotImplementedError).")
            return False
        except AssertionError as exc:
            print(f"Not yet: {exc}")
            return False
        except Exception as exc:  # the learner's code crashed: say so, keep the notebook going
            print(f"Not yet: your code raised {type(exc).__name__}: {exc}")
            return False
        print(f"PASS: {message}")
        return True

    return run
