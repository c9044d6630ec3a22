"""Reading a run as a picture, and sending it to the tracing you already use (lesson 08).

    timeline(result)            requests, calls, sub-agents, compactions and waits on one
                                time axis, tokens per request: an SVG in a notebook, text
                                elsewhere (timeline.py, svg.py; needs nothing)
    OTelObserver()              each run as OpenTelemetry spans, named as the GenAI
                                conventions name them (otel.py; needs opentelemetry-sdk)

``from harness.trace import OTelObserver`` imports OpenTelemetry; the timeline does not, so
it draws in a browser tab too.
"""

from __future__ import annotations

from typing import Any

from .timeline import Bar, Timeline, timeline

__all__ = ["Bar", "OTelObserver", "Timeline", "timeline"]


def __getattr__(name: str) -> Any:  # OTelObserver: OpenTelemetry is imported when asked for
    if name == "OTelObserver":
        from .otel import OTelObserver
        return OTelObserver
    raise AttributeError(f"module 'harness.trace' has no attribute {name!r}")
