"""The run's door: the services through which a mechanism acts on the world, so that
every guarantee of the core holds for it (its run makes one; ``mechanism.door``):

    door.ask(messages, purpose="summary")     a model request: the run's clock, cancel,
                                              budget and events; never replayed as an answer
    door.read_file / write_file(root, path)   a file under root: no link followed, regular
                                              files only, capped, never blocking
    door.within_clock(fn)                     work whose time depends on outside data
    door.emit(event, **data)                  an event: hooks and observers see it
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from .extend import service

if TYPE_CHECKING:
    from .models import ModelReply
    from .tools import Tool

T = TypeVar("T")


class Door:
    """The services of one run (loop.Run makes it), and what a mechanism may read of it:
    ``agent_id``, ``depth``, ``asked`` (run()'s plan_first and plan), `tools`, `schemas`."""

    def __init__(self, run: Any, asked: dict[str, Any]) -> None:
        self._run = run
        self.asked = asked
        self.agent_id = run.agent_id
        self.depth = run.depth

    def ask(self, messages: Iterable[dict], *, purpose: str, model: Any = None,
            tools: Iterable[dict] = (), tool_choice: Any = None) -> ModelReply:
        """A request that is not the agent's turn (``model``: None for the agent's own).
        `RunOver` when the run must stop; `ModelError` when the request failed."""
        return self._run.request(list(messages), list(tools), tool_choice, purpose=purpose,
                                 model=model)

    def read_file(self, root: Any, path: str, *, limit: int = 1_000_000) -> str:
        files = service("files")  # lent by harness/workspace: the file tools' own checks
        return self.within_clock(lambda: files.read_text(root, path, limit))

    def write_file(self, root: Any, path: str, text: str) -> None:
        files = service("files")
        self.within_clock(lambda: files.write_text(root, path, text))

    def within_clock(self, fn: Callable[[], T]) -> T:
        return self._run.control.wait(fn)

    def emit(self, type_: str, **data: Any) -> str | None:
        return self._run.emit(type_, **data)

    def run_child(self, child: Any) -> Any:  # a sub-agent, inside this run (subagent.py)
        return self._run.agent.run_child(child, self._run)

    def tools(self) -> dict[str, Tool]:
        return dict(self._run.calls.tools)

    def schemas(self) -> list[dict]:
        return self._run.schemas

    def pinned(self) -> list[str]:
        return [text for m in self._run.mechanisms if (text := m.pinned())]
