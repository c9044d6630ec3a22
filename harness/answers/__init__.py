"""Answers with a shape (lesson 16): ``agent.run(task, output=Findings)``.

    result = agent.run("Why was ORD-1002 refunded late?", output=Findings)
    result.output            # a Findings instance (None unless the run completed)
    result.output.found      # [Found(claim=..., sources=["call_2_0"])]

The final answer must validate against a pydantic model. The model may give it two ways,
whichever it takes:

    a `final_answer` call   its arguments are the answer's fields (every provider that
                            calls tools can: the portable way)
    an answer in text       the answer as JSON (in a ```json fence or not)

Either way the answer goes through the run's answer path (the ``stop`` hooks, the stop
gate, a check of lesson 11), then is checked here. One that does not validate is pushed
back with the error, at most `PUSHBACKS` times; after that the run ends ``invalid_output``
with the last answer in ``final``. The check sees the run's calls (``info.context["calls"]``:
call id -> status), so an answer may be held to what the run really found: `Findings`
refuses a source that is not a call of this run that succeeded.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from ..extend import Extension, register
from ..mechanism import Mechanism, Note
from ..outcomes import RunOver
from ..tools import Tool, ToolResult
from .findings import Found, Findings

__all__ = ["PUSHBACKS", "Findings", "Found", "Shaped"]

PUSHBACKS = 2  # answers pushed back before the run ends invalid_output (the stop gate: 1)
FENCE = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.DOTALL)
DESCRIPTION = ("Give your final answer. Its arguments are the answer; call it once you are "
               "done, instead of answering in text.")


class Shaped(Mechanism):
    """The shape of one run's answer: the `final_answer` tool, and the check of an answer."""

    def __init__(self, output: type[BaseModel]) -> None:
        if not (isinstance(output, type) and issubclass(output, BaseModel)):
            raise TypeError(f"output={output!r}: give a pydantic model class (a subclass of "
                            "pydantic.BaseModel), e.g. output=Findings")
        self.output_type = output
        self.calls: dict[str, str] = {}  # this run's calls: id -> status
        self.pushbacks = 0
        self.given: tuple[str, BaseModel] | None = None  # a final_answer that validated
        self.output: BaseModel | None = None  # set only when the run completes with it

    def prompt(self) -> str:
        return (f"Your final answer has a fixed shape ({self.output_type.__name__}): give it "
                "by calling `final_answer`, whose arguments are its fields.")

    def tools(self) -> list[Tool]:
        return [Tool("final_answer", DESCRIPTION, self.output_type, self._final, harness_tool=True)]

    def _final(self, **fields: Any) -> ToolResult:
        text = json.dumps(self.output_type.model_construct(**fields).model_dump(mode="json"),
                          ensure_ascii=False)
        instance, error = self.check(text)
        if instance is None:
            return ToolResult(False, error)
        self.given = (text, instance)
        return ToolResult(True, "Answer recorded.")

    def after_call(self, call: Any) -> list[Note]:
        self.calls[call.id] = self._status(call.name, call.status)
        if call.name == "final_answer" and not call.ok:  # a refused answer is a push back
            return list(self._push_back(call.result.output, last=False, final=None))
        return []

    def after_round(self, calls: list[Any]) -> list[Note]:
        if self.given is not None:  # the answer goes the way a text answer goes
            text, self.given = self.given[0], None
            self.door.answer(text)
        return []

    def on_answer(self, answer: Any) -> list[Note]:
        instance, error = self.check(answer.text)
        if instance is not None:
            self.output = instance
            return []
        return list(self._push_back(error, last=answer.last_turn, final=answer.text,
                                    message=True))

    def _status(self, name: str, status: str) -> str:
        """A call's status as evidence: the harness's own tools (a plan, a memory, this
        answer) show nothing about the world; a sub-agent's answer does (delegate_task)."""
        tool = self.door.tools().get(name)
        own = tool is not None and tool.harness_tool and name != "delegate_task"
        return "harness" if own and status == "ok" else status

    def check(self, text: str) -> tuple[BaseModel | None, str]:
        """The answer in ``text`` as an instance, or None and what is wrong with it."""
        fenced = FENCE.match(text or "")
        try:
            data = json.loads(fenced.group(1) if fenced else text or "")
        except ValueError:
            return None, (f"the answer is not JSON: give it as a `final_answer` call (or as "
                          f"JSON of {self.output_type.__name__})")
        paused = self.door.asked.get("paused")  # a resumed run: the calls before its pause
        calls = {e.call_id: self._status(e.tool_name, e.status) for e in getattr(
            paused, "events", ()) if e.type == "tool_result" and e.agent_id == self.door.agent_id}
        try:
            return self.output_type.model_validate(data, context={"calls": {
                **calls, **self.calls}}), ""
        except ValidationError as exc:
            return None, "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'the answer'}: "
                f"{e['msg'].removeprefix('Value error, ')}" for e in exc.errors()[:5])

    def _push_back(self, error: str, *, last: bool, final: str | None, message: bool = False):
        if self.pushbacks >= PUSHBACKS or last:
            raise RunOver("invalid_output", final=final, error=f"the answer is not a valid "
                          f"{self.output_type.__name__}: {error}")
        self.pushbacks += 1
        why = (f"Your answer is not a valid {self.output_type.__name__}: {error}. Give it "
               "again, fixed, with `final_answer`.")
        yield Note("answer_pushback", {"error": error, "pushbacks": self.pushbacks},
                   message=why if message else None)

    def facts(self) -> dict[str, Any]:
        return {"answer_pushbacks": self.pushbacks}

    def results(self) -> dict[str, Any]:
        return {"output": self.output}


register(Extension(
    "answers", tools=("final_answer",), outcomes=("invalid_output",),
    events={"answer_pushback": "error, pushbacks"}, services={"answers": Shaped}))
