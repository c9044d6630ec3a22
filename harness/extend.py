"""Extensions: what a sub-package adds to the harness, registered in one place.

The core (the files in this folder) imports no sub-package. A sub-package that adds to
every run says so when it is imported:

    register(Extension("context", settings=ContextSettings, layer=compaction_layer,
                       events={"compaction": "before_tokens, after_tokens, ..."},
                       tools=("compact",), hooks={"post_compact": "compaction"}))

Its settings become `Agent` keywords, its events and hook names join `events.EVENTS` and
`Hooks`, its tool names are the harness's own, and its layer joins each ``agent.stack``
(stack.py). The package ships a list of them (``harness/__init__.py``), imported only
when something asks for one (`discover`): an `Agent` keyword the core does not know, a
model with a context window, a hook name, a *service*: a piece of an extension lent to
the core by name (``service("files")``: the workspace's safe files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from .events import EVENTS

SHIPPED: list[str] = []  # the modules discover() imports (harness/__init__.py lists them)
REGISTERED: dict[str, Extension] = {}
CORE_TOOLS = ("todo_write", "delegate_task")  # made by the core for a run


@dataclass(frozen=True)
class Extension:
    """What one sub-package adds; every field is optional."""

    name: str
    settings: type | None = None
    """A frozen dataclass: its fields are `Agent` keywords, checked when it is made."""
    layer: Callable[[Any], Any] | None = None
    """``layer(agent) -> Layer | None``: its place in the agent's stack, if it has one."""
    events: Mapping[str, str] = field(default_factory=dict)  # event name: its fields
    hooks: Mapping[str, str] = field(default_factory=dict)  # a hook alias: its event
    tools: tuple[str, ...] = ()  # the names of the tools it makes: no user tool takes them
    outcomes: tuple[str, ...] = ()  # the ways it may end a run
    services: Mapping[str, Any] = field(default_factory=dict)


def register(extension: Extension) -> None:
    """Add ``extension``; registering a name again replaces it (a module reloaded)."""
    REGISTERED[extension.name] = extension
    EVENTS.update(extension.events)


def discover(until: Callable[[], bool] = lambda: False) -> dict[str, Extension]:
    """Import the shipped extensions not imported yet, one by one, until ``until()``."""
    while SHIPPED and not until():
        import_module(SHIPPED.pop(0))  # it registers itself
    return REGISTERED


def service(name: str) -> Any:
    """What an extension lends under ``name``; `LookupError` if none does."""
    def lent() -> dict[str, Any]:
        return {k: v for e in REGISTERED.values() for k, v in e.services.items()}
    if name not in lent():
        discover(until=lambda: name in lent())
    if name not in lent():
        raise LookupError(f"no extension lends the service {name!r}")
    return lent()[name]


def harness_tools() -> frozenset[str]:
    """The names of the tools the core and the extensions in use make."""
    return frozenset(CORE_TOOLS).union(*(e.tools for e in REGISTERED.values()))


def aliases() -> dict[str, str]:
    """The hook aliases of the extensions in use: ``{alias: event}``."""
    return {k: v for e in REGISTERED.values() for k, v in e.hooks.items()}
