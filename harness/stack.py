"""An agent's stack: the mechanisms of its runs, one ordered list built in one place.

    >>> Agent(model, tools, planning=True, context_window=8000).stack
    Stack([planning, verification, compaction])

Each `Layer` makes its mechanism fresh for every run (or None: no part in that run); the
loop asks them in this order at every fixed point (mechanism.py). `build` makes the list
when the agent is made: the core's layers, each extension's in use (extend.py), then your
``mechanisms=``. It is yours to reorder and insert into before a run:
``agent.stack.insert(0, Layer("audit", lambda door: Audit()))``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .extend import REGISTERED

Make = Callable[[Any], Any]  # the run's door -> its mechanism, or None


@dataclass
class Layer:
    """One entry of a stack: a name, and how a run makes its mechanism from its door."""

    name: str
    make: Make
    order: int = 60  # its place when the stack is built (yours: 60, compaction: 90)
    tools: tuple[str, ...] = ()  # the tools it makes: no tool of yours may take these names
    later: tuple[str, ...] = ()  # name prefixes of tools it adds when a run starts (MCP)
    close: Callable[[], None] | None = None  # what Agent.close() stops

    def __repr__(self) -> str:
        return self.name


class Stack(list):
    """The layers of an agent in the order they act: a list that finds them by name."""

    def __repr__(self) -> str:
        return f"Stack([{', '.join(map(repr, self))}])"

    def find(self, name: str) -> Layer:
        for layer in self:
            if layer.name == name:
                return layer
        raise KeyError(f"no layer named {name!r} in {self!r}")


def build(agent: Any, mine: Iterable[Callable[[], Any]] = ()) -> Stack:
    """The stack of ``agent`` from its settings: the core's layers, the extensions' in
    use, then ``mine`` (classes, or functions of no arguments, that make a mechanism)."""
    s = agent.settings
    layers = []
    if s.planning:
        layers.append(Layer("planning", planning(s), order=10, tools=("todo_write",)))
    if s.subagents:
        layers.append(Layer("subagents", subagents(s), order=20, tools=("delegate_task",)))
    for extension in REGISTERED.values():
        if extension.layer and (layer := extension.layer(agent)):
            layers.append(layer)
    for make in mine:
        name = getattr(make, "__name__", type(make).__name__)
        layers.append(Layer(name, lambda door, make=make: make()))
    return Stack(sorted(layers, key=lambda layer: layer.order))


def planning(s: Any) -> Make:
    from .planning import Planning  # imported by an agent that plans, not before

    def make(door: Any) -> Any:
        return Planning(s.reminder_after, s.reminder_counting, plan_first=door.asked["plan_first"],
                        plan=door.asked["plan"], from_words=s.plan_from_words)
    return make


def subagents(s: Any) -> Make:
    from .subagent import Subagents

    def make(door: Any) -> Any:  # a sub-agent never delegates again
        return None if door.depth else Subagents(s.subagent_tools, s.subagent_max_turns,
                                                 s.agent_id, system=s.subagent_system)
    return make
