"""Context that outlives the window (lesson 13): compaction of what each request sends,
while the run's transcript keeps every message. Registered as the ``context`` extension:
its settings are `Agent` keywords (``context_window=8000``), its layer is ``compaction``,
last in ``agent.stack``; a run whose request cannot fit its window ends
``context_overflow``. It also lends the core the ``runs`` service: a run on disk."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..extend import Extension, register
from ..hooks import offered
from ..models import estimate_tokens
from ..stack import Layer
from . import saved
from .compaction import OVERFLOW, Compaction, check_fixed, compact_schema, request_tokens

__all__ = ["Compaction", "ContextSettings", "check_fixed", "request_tokens"]
# tokens the core adds to every request of an agent that plans / delegates (its paragraph
# and todo_write: ~290 today; delegate_task: ~150), counted a little under: the check at
# Agent() must never refuse what the first request, which measures them, would accept
HARNESS_TOKENS = {"planning": 250, "subagents": 120}


@dataclass(frozen=True)
class ContextSettings:
    """The `Agent` keywords of the context extension."""

    context_window: int | None = None
    """The window in tokens (None: the model's); requests are compacted to fit (lesson 13)."""
    compact_at: float = 0.8
    """The share of the window above which a request is compacted."""
    summary_model: Any = None
    """The model that summarises the oldest part of a long run (None: the agent's own)."""
    keep_rounds: int = 2
    """The last tool rounds a compaction sends whole while the window allows it (else their
    results become stubs, oldest first, the very last round's only to fit the window)."""
    offload_dir: str | None = None
    """A workspace folder for compacted tool results, to read back (None: not kept)."""

    def __post_init__(self) -> None:
        if not 0 < self.compact_at < 1 or self.keep_rounds < 1:
            raise ValueError("compact_at must be between 0 and 1, keep_rounds at least 1")
        if self.context_window is not None and self.context_window < 200:
            raise ValueError("context_window must be at least 200 tokens, or None")


def compaction_layer(agent: Any) -> Layer | None:
    """The agent's `Compaction` layer, if it has a window (its own, or its model's).

    `ValueError` if the window cannot hold the fixed part of a request with room to work
    (`check_fixed`): counted here from what the agent knows (its system prompt, its tools'
    schemas, the harness's own tools and paragraphs); the task and the plan are counted
    too at the first request, which ends the run ``context_overflow`` instead."""
    o = agent.options["context"]
    window = o.context_window or getattr(agent.model, "context_window", None)
    if not window:
        return None
    check_fixed(window, o.compact_at, fixed_part(agent))

    def make(door: Any) -> Compaction:
        root = next((t.fn.__self__.root for t in agent.tools.values()  # the workspace, if any
                     if hasattr(getattr(t.fn, "__self__", None), "root")), None)
        return Compaction(window, compact_at=o.compact_at, summary_model=o.summary_model,
                          keep_rounds=o.keep_rounds, offload=o.offload_dir, root=root)
    # last in the stack: it bounds what the others sent
    return Layer("compaction", make, order=90, tools=("compact",))


def fixed_part(agent: Any) -> dict[str, int]:
    """What every request of ``agent`` holds before its task, in tokens: the part of
    the fixed part known when the agent is made."""
    schemas = [*(t.schema() for t in agent.tools.values() if offered(agent.permissions, t)),
               compact_schema()]
    s = agent.settings
    harness = sum(n for name, n in HARNESS_TOKENS.items() if getattr(s, name, False))
    return {"system prompt": estimate_tokens(len(agent.system or "") + 12),
            "tool schemas": estimate_tokens(len(json.dumps(schemas))),
            "the harness's tools and prompts": harness}


register(Extension(
    "context", settings=ContextSettings, layer=compaction_layer, tools=("compact",),
    events={"pre_compact": "before_tokens, asked (the model called compact)",
            "compaction": "before_tokens, after_tokens, stubbed, summarised, window",
            "summary_failed": "error, messages (kept whole: no summary replaces them)"},
    outcomes=(OVERFLOW,),
    hooks={"post_compact": "compaction"}, services={"runs": saved}))
