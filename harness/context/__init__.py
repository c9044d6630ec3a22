"""Context that outlives the window (lesson 13): compaction of what each request sends,
while the run's transcript keeps every message."""

from __future__ import annotations

from typing import Any

from .compaction import Compaction, request_tokens

__all__ = ["Compaction", "compaction_for", "request_tokens"]


def compaction_for(agent: Any, run: Any, window: int, planning: Any = None) -> Compaction:
    """The `Compaction` of one run of ``agent`` (``Agent.mechanisms`` makes it last):
    its settings, the run's budget and tools, the plan to keep, the workspace to offload to."""
    s = agent.settings
    root = next((t.fn.__self__.root for t in agent.tools.values()  # the workspace, if any
                 if hasattr(getattr(t.fn, "__self__", None), "root")), None)
    return Compaction(
        window, compact_at=s.compact_at, summary_model=s.summary_model or agent.model,
        keep_rounds=s.keep_rounds, offload=s.offload_dir, root=root, emit=run.emit,
        budget=run.control.budget, schemas=lambda: run.schemas,
        plan=lambda: planning.plan.render() if planning and len(planning.plan) else None)
