"""Extensions: what a sub-package adds to the harness, registered in one place. The core
imports no sub-package; a sub-package registers itself when it is imported:

    register(Extension("yours", settings=YourSettings, layer=your_layer,
                       events={"your_event": "its fields"}, tools=("your_tool",)))

Its settings become `Agent` keywords, its events and hook aliases join `events.EVENTS` and
`Hooks`, its layer joins ``agent.stack`` (stack.py). The package lists the ones it ships
(``harness.SHIPPED``); `discover` imports them only when one is asked for: a keyword the
core does not know, a model with a context window, a hook name, or a *service* one lends
the core by name (``service("files")``: the workspace's checked files).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
import threading
from importlib import import_module
from typing import Any

from .events import EVENTS
from .outcomes import OUTCOMES

SHIPPED: list[str] = []  # the modules discover() imports (harness/__init__.py lists them)
REGISTERED: dict[str, Extension] = {}
CORE_TOOLS = ("todo_write", "delegate_task")  # the core makes these for a run
FINDING = threading.RLock()  # two threads may look for an extension at once


@dataclass(frozen=True)
class Extension:
    """What one sub-package adds to the harness."""

    name: str
    settings: type | None = None  # a frozen dataclass: its fields are Agent keywords
    layer: Callable[[Any], Any] | None = None  # layer(agent) -> its stack.Layer, or None
    events: Mapping[str, str] = field(default_factory=dict)  # event name: its fields
    hooks: Mapping[str, str] = field(default_factory=dict)  # a hook alias: its event
    tools: tuple[str, ...] = ()  # the tools it makes (Permissions allows them by name)
    outcomes: tuple[str, ...] = ()  # the ways it may end a run
    services: Mapping[str, Any] = field(default_factory=dict)  # what it lends the core


def register(extension: Extension) -> None:
    REGISTERED[extension.name] = extension
    EVENTS.update(extension.events)
    OUTCOMES.extend(o for o in extension.outcomes if o not in OUTCOMES)


def discover(until: Callable[[], bool] = lambda: False) -> None:
    """Import the shipped extensions not imported yet, one by one, until ``until()``."""
    with FINDING:
        while SHIPPED and not until():
            import_module(SHIPPED.pop(0))  # it registers itself


def service(name: str) -> Any:
    """What an extension lends the core under ``name``; `LookupError` if none does."""
    def lent() -> dict[str, Any]:
        return {k: v for e in REGISTERED.values() for k, v in e.services.items()}
    discover(until=lambda: name in lent())
    if name not in lent():
        raise LookupError(f"no extension lends the service {name!r}")
    return lent()[name]


def settings_of(options: dict[str, Any], core: tuple[str, ...]) -> dict[str, Any]:
    """Each registered extension's settings, made from its `Agent` keywords in
    ``options``; `TypeError` for a keyword neither they nor the core (``core``) take."""
    theirs = {name: e for e in REGISTERED.values() if e.settings
              for name in e.settings.__dataclass_fields__}
    if unknown := sorted(set(options) - set(theirs)):
        raise TypeError(f"Agent got unknown settings {unknown}; the settings are: "
                        f"{', '.join([*core, *theirs])} (see harness.Settings)")
    return {e.name: e.settings(**{k: v for k, v in options.items() if theirs[k] is e})
            for e in REGISTERED.values() if e.settings}
