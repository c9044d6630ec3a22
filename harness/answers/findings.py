"""`Findings`: an answer that says what was found, what was inferred and what is still
missing, each thing found tied to the calls that support it (the controlled-execution
article: "one configuration value found does not mean the problem is solved").

Checked against the run (``agent.run(task, output=Findings)``): every source is the id of
a call of this run that succeeded. A claim whose call failed, or was never made, is not
found: it is inferred at best.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator


class Found(BaseModel):
    """One thing the run found, and the calls that showed it."""

    model_config = ConfigDict(extra="forbid")
    claim: str = Field(min_length=1, description="What was found, in one sentence.")
    sources: list[str] = Field(min_length=1, description=(
        "The ids of the tool calls of this run whose results show it."))


class Findings(BaseModel):
    """What was found (with its sources), what was inferred, what is still missing."""

    model_config = ConfigDict(extra="forbid")
    found: list[Found] = Field(description="Facts the tool results show, each with its calls.")
    inferred: list[str] = Field(default_factory=list, description=(
        "Conclusions drawn from what was found, not shown by a call."))
    missing: list[str] = Field(default_factory=list, description=(
        "What is still unknown or not done."))

    @model_validator(mode="after")
    def _cited_calls_succeeded(self, info: ValidationInfo) -> Findings:
        calls: dict[str, Any] | None = (info.context or {}).get("calls")
        if calls is None:  # not checked against a run (e.g. built by hand)
            return self
        for item in self.found:
            for source in item.sources:
                if source not in calls:
                    raise ValueError(f"source {source!r} of {item.claim!r} is not a call of "
                                     f"this run; cite the ids of calls that ran: "
                                     f"{sorted(calls) or 'none yet'}")
                if calls[source] == "harness":
                    raise ValueError(f"call {source!r} is one of the harness's own tools (a "
                                     f"plan, a memory, an answer): it shows nothing about "
                                     f"{item.claim!r}; cite the call that looked it up")
                if calls[source] != "ok":
                    raise ValueError(f"call {source!r} ({calls[source]}) did not succeed, so "
                                     f"it shows nothing: move {item.claim!r} to inferred or "
                                     "missing, or cite a call that succeeded")
        return self
