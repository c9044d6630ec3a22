"""The run's services: the one door through which a mechanism acts on the world.

    door.ask(messages, purpose="summary")    a model request, through the run's clock,
                                             cancel, budget, events and call log: counted
                                             in RunResult.requests, never replayed as an answer
    door.read_file(root, path)               a file under ``root``: no link followed at any
    door.write_file(root, path, text)        step, regular files only, capped, never blocking
    door.within_clock(fn)                    work whose time depends on outside data
    door.emit(event, **data)                 an event: hooks and observers see it
    door.run_child(child)                    a sub-agent, inside this run (subagent.py)

A mechanism may also read its run through it: the agent's id and depth, what `run()` was
asked (``asked``), the run's tools, what each request offers (`schemas`) and what other
mechanisms pin to every request (`pinned`: the plan). Every guarantee of the core holds
for whatever goes through here; the run sets ``mechanism.door`` before any fixed point.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from .extend import service
from .models import ModelReply
from .tools import Tool

T = TypeVar("T")
MAX_FILE = 1_000_000  # characters a file read through the door may hold, by default


class Door:
    """What a mechanism may use of its run, and nothing else (made by loop.Run)."""

    def __init__(self, run: Any, asked: dict[str, Any]) -> None:
        self._run = run
        self.asked = asked  # run()'s own arguments: plan_first, plan
        self.agent_id = run.agent_id
        self.depth = run.depth

    def emit(self, type_: str, **data: Any) -> str | None:
        return self._run.emit(type_, **data)

    def ask(self, messages: Iterable[dict], *, purpose: str, model: Any = None,
            tools: Iterable[dict] = (), tool_choice: Any = None) -> ModelReply:
        """A model request that is not the agent's turn (``model``: another than the
        agent's). Raises `RunOver` when the run must stop, `ModelError` when it failed."""
        return self._run.request(list(messages), list(tools), tool_choice, purpose=purpose,
                                 model=model)

    def within_clock(self, fn: Callable[[], T]) -> T:
        """``fn()``, given up (`RunOver`) as soon as the run is cancelled or out of time."""
        return self._run.control.wait(fn)

    def read_file(self, root: str | os.PathLike, path: str, *, limit: int = MAX_FILE) -> str:
        """The UTF-8 text of ``root/path``, checked as ``read_file`` checks it."""
        files = service("files")
        return self.within_clock(lambda: files.read_text(root, path, limit))

    def write_file(self, root: str | os.PathLike, path: str, text: str) -> None:
        """Replace (or create) ``root/path``, checked as ``write_file`` checks it."""
        files = service("files")
        self.within_clock(lambda: files.write_text(root, path, text))

    def run_child(self, child: Any) -> Any:
        return self._run.run_child(child)

    def tools(self) -> dict[str, Tool]:
        """The run's tools by name (fixed when it starts)."""
        return dict(self._run.calls.tools)

    def schemas(self) -> list[dict]:
        """The tool schemas each request of the run offers."""
        return self._run.schemas

    def pinned(self) -> list[str]:
        """What the mechanisms pin to every request (the plan), as user messages' text."""
        return [text for m in self._run.mechanisms if (text := m.pinned())]
