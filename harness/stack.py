"""An agent's stack: the mechanisms of its runs, one ordered list built in one place.

    >>> Agent(model, tools, planning=True, subagents=True, context_window=8000).stack
    Stack([planning, subagents, verification, compaction])

Each `Layer` makes its mechanism fresh for every run (or nothing, for a run it has no
part in); the loop asks them in this order at every fixed point (mechanism.py). The list
is built from the agent's settings when the agent is made: the core's layers (planning,
subagents, verification), each extension's in use (extend.py), then your ``mechanisms=``,
before compaction, which bounds what the others send. It is yours to read, reorder and insert into before a run:

    agent.stack.insert(0, Layer("audit", lambda door: Audit()))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .extend import REGISTERED
from .mechanism import Mechanism

Make = Callable[[Any], "Mechanism | None"]  # door -> the run's mechanism, or None


@dataclass
class Layer:
    """One entry of a stack: a name, and how a run makes its mechanism from the door."""

    name: str
    make: Make
    order: int = 60  # where it goes when the stack is built (yours: 60, compaction: 90)
    tools: tuple[str, ...] = ()  # the names of the tools it makes: no tool of yours takes one
    later: tuple[str, ...] = ()  # prefixes of tool names it adds when a run starts (MCP)
    close: Callable[[], None] | None = None  # what Agent.close() stops (servers)

    def __repr__(self) -> str:
        return self.name


class Stack(list):
    """The layers of an agent, in the order they act: a list, with names to find them."""

    def __repr__(self) -> str:
        return f"Stack([{', '.join(layer.name for layer in self)}])"

    def names(self) -> list[str]:
        return [layer.name for layer in self]

    def find(self, name: str) -> Layer:
        for layer in self:
            if layer.name == name:
                return layer
        raise KeyError(f"no layer named {name!r} in {self!r}")


def build(agent: Any, mine: Iterable[Callable[[], Mechanism]] = ()) -> Stack:
    """The stack of ``agent``, from its settings: the core's layers, the extensions',
    then ``mine`` (classes or functions that make a mechanism), in their order."""
    s = agent.settings
    layers = [Layer("verification", verification(agent), order=50)]  # a stop hook's "no"
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
    from .planning import Planning  # imported only by an agent that plans

    def make(door: Any) -> Mechanism:
        return Planning(s.reminder_after, s.reminder_counting, plan_first=door.asked["plan_first"],
                        plan=door.asked["plan"], from_words=s.plan_from_words)
    return make


def verification(agent: Any) -> Make:
    from .verify import Verification

    def make(door: Any) -> Mechanism | None:  # a stop hook may come after the agent
        return Verification(agent.max_refusals) if agent.hooks.listening("stop") else None
    return make


def subagents(s: Any) -> Make:
    from .subagent import Subagents

    def make(door: Any) -> Mechanism | None:
        if door.depth:  # a sub-agent never delegates again
            return None
        return Subagents(s.subagent_tools, s.subagent_max_turns, s.agent_id,
                         system=s.subagent_system)
    return make
