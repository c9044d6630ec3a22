"""Memory across runs (lesson 16): Markdown files the person keeps, changed only on evidence.

    support-memory/          a folder the person chooses (and reads, and edits)
      temporary.md           kept by runs while they work: their remember tool writes here
      archive.md             kept by archiving a batch of operation records (`archive`)

``Agent(model, tools, memory=Memory(folder))`` (or ``memory=folder``): each run reads both
files into its system prompt and gets a ``remember`` tool, whose changes are checked before
anything is written (checks.py): sources that are calls of this run or records that
succeeded, a rule only from more than one case or a stated reason, a one-off kept as one,
old memory kept against thin evidence, nothing that grants a tool or a permission
(grants.py), and the person's edits never overwritten (remember.py). Registered as the
``memory`` extension: its setting, its layer (not in sub-agents), its tool and its event.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..agent import Agent
from ..extend import Extension, register
from ..models import ChatModel
from ..result import RunResult
from ..stack import Layer
from ..tools import Tool
from .checks import Refused
from .entries import FILES, Entry
from .grants import grants
from .records import Record, archive_task, batch_of
from .remember import Memory, Remembering

__all__ = ["FILES", "Entry", "Memory", "MemorySettings", "Record", "Refused", "Remembering",
           "archive", "grants"]


def archive(memory: Memory | str | os.PathLike, records: Iterable[Record | dict],
            model: ChatModel, *, tools: Iterable[Tool] = (), **settings: Any) -> RunResult:
    """Archive a batch of operation records: one run of ``model`` that reads the whole batch
    and proposes archive memory with ``remember``, citing records by id, under the same
    checks as any run. ``settings``: the `Agent`'s (``max_turns=``, ``permissions=``, ...).

    >>> archive(memory, [Record("op-1", "status", "MSG-17", "-> no action needed")], model)
    """
    memory = memory if isinstance(memory, Memory) else Memory(memory)
    batch = batch_of(records)  # checked here, before any request
    agent = Agent(model, tools, memory=memory.archiving(batch), **settings)
    return agent.run(archive_task(batch))


@dataclass(frozen=True)
class MemorySettings:
    """The `Agent` keyword of memory."""

    memory: Any = None
    """A `Memory`, or the folder that holds it (lesson 16); None: no memory."""


def memory_layer(agent: Any) -> Layer | None:
    """Each run's `Remembering` (none in a sub-agent: it reports to its parent)."""
    given = agent.options["memory"].memory
    if given is None:
        return None
    memory = given if isinstance(given, Memory) else Memory(given)  # the folder made now
    return Layer("memory", lambda door: None if door.depth else memory(), order=45,
                 tools=("remember",))


register(Extension("memory", settings=MemorySettings, layer=memory_layer, tools=("remember",),
                   events={"memory_update": "file, accepted, entry, kind, sources, why"}))
