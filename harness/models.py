"""Models: the one thing the loop asks a question of.

A model takes the conversation so far (OpenAI chat-completions wire format) plus the
tool schemas and answers with one assistant message: text, tool calls, or both.

    messages, tools, tool_choice --> model.complete(...) --> ModelReply(content, tool_calls, usage)

Two models share one reply parser (`parse_reply`):

- `ScriptedModel` plays back assistant messages you write by hand (or build with a
  function from what the tools really returned). Offline, deterministic, and it keeps
  every request it received so you can look at exactly what was sent.
- `OpenAIModel` calls any OpenAI-compatible server through the `openai` SDK
  (OpenAI, DeepSeek, GLM, Ollama, vLLM, OpenRouter).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

Message = dict[str, Any]
Step = Message | Callable[[list[Message]], Message]


class ModelError(RuntimeError):
    """A model request failed. The loop turns it into the outcome ``"model_error"``."""


@dataclass
class ModelReply:
    """One assistant turn: what the model said, which tools it wants, what it cost."""

    content: str | None
    tool_calls: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=dict)

    def message(self) -> Message:
        """The assistant message exactly as it goes into the transcript."""
        if not self.tool_calls:  # the API refuses a null content without tool calls
            return {"role": "assistant", "content": self.content or ""}
        return {"role": "assistant", "content": self.content, "tool_calls": self.tool_calls}


class ChatModel(Protocol):
    """Anything with this method can drive an `Agent`."""

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply: ...


def parse_reply(message: Any, usage: dict | None = None, *, estimate: int = 0,
                id_prefix: str = "call") -> ModelReply:
    """Turn an assistant message dict (from a script or from the SDK) into a `ModelReply`.

    Tool calls are normalised to the wire format: ``id``, ``type: "function"`` and
    ``function: {name, arguments}`` with ``arguments`` a string. A call without an id
    gets ``<id_prefix>_<index>``. Arguments are *not* parsed here: a malformed string
    reaches the tool layer, which refuses it in a way the model can read.
    """
    if not isinstance(message, dict):
        raise ModelError(f"expected an assistant message dict, got {type(message).__name__}")
    content = message.get("content")
    if content is None and message.get("refusal"):  # a refusal is the model's answer too
        content = message["refusal"]
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False)
    calls = []
    for i, call in enumerate(message.get("tool_calls") or []):
        fn = call.get("function") or {}
        args = fn.get("arguments", "")
        if not isinstance(args, str):  # a hand-written script may pass a dict
            args = json.dumps(args, ensure_ascii=False)
        call_id, name = call.get("id") or f"{id_prefix}_{i}", fn.get("name") or ""
        calls.append({  # odd ids and names become strings: the loop refuses them cleanly
            "id": call_id if isinstance(call_id, str) else json.dumps(call_id),
            "type": "function",
            "function": {"name": name if isinstance(name, str) else json.dumps(name),
                         "arguments": args},
        })
    if usage:
        prompt = int(usage.get("prompt_tokens") or 0)
        completion = int(usage.get("completion_tokens") or 0)
        report = {"prompt_tokens": prompt, "completion_tokens": completion, "estimated": False}
    else:
        completion = estimate_tokens(len(content or "") + sum(len(json.dumps(c)) for c in calls))
        report = {"prompt_tokens": estimate, "completion_tokens": completion, "estimated": True}
    report["total_tokens"] = report["prompt_tokens"] + report["completion_tokens"]
    return ModelReply(content=content, tool_calls=calls, usage=report)


def estimate_tokens(chars: int) -> int:
    """A rough token estimate (about four characters a token), labelled as such in usage."""
    return (chars + 3) // 4


class _PromptSizer:
    """Estimates the prompt size of a growing transcript in O(new messages) per request.

    Re-counting the whole history on every request would make a long run quadratic,
    so it remembers how far it had counted in each message list. It remembers only
    the last few lists (a run and its sub-agents), so a model used for many runs does
    not hold on to every transcript it ever saw.
    """

    KEEP = 8

    def __init__(self) -> None:
        self._seen: dict[int, tuple[int, int, Message | None]] = {}
        self._tools: tuple[list[dict] | None, int] = (None, 0)

    def chars(self, messages: list[Message], tools: list[dict]) -> int:
        count, total, last = self._seen.pop(id(messages), (0, 0, None))
        if count > len(messages) or (count and messages[count - 1] is not last):
            count, total = 0, 0  # not the list we counted before: start again
        for msg in messages[count:]:
            total += len(str(msg.get("content") or "")) + 12
            total += sum(len(c["function"]["arguments"]) + 40 for c in msg.get("tool_calls") or ())
        if messages:
            self._seen[id(messages)] = (len(messages), total, messages[-1])
            if len(self._seen) > self.KEEP:  # forget the list used longest ago
                del self._seen[next(iter(self._seen))]
        return total + self._tools_chars(tools)

    def _tools_chars(self, tools: list[dict]) -> int:
        if not tools:
            return 0
        if self._tools[0] is not tools:
            self._tools = (tools, len(json.dumps(tools)))
        return self._tools[1]


class ScriptExhausted(ModelError):
    """The scripted model was asked for more replies than its script holds."""


class ScriptedModel:
    """A model that plays back a script: the offline, deterministic model of the course.

    Each step is an assistant message in the wire format, or a function
    ``f(messages) -> message`` that builds one from the run so far (so a scripted
    answer can quote what a tool really returned)::

        model = ScriptedModel([
            {"tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]},
            lambda messages: {"content": f"The sum is {messages[-1]['content']}."},
        ])

    A hand-written step may leave out a call's ``id`` and ``type`` and give
    ``arguments`` as a dict: they are filled in and serialised to the wire format.
    A step may carry ``"usage": {"prompt_tokens": .., "completion_tokens": ..}``; it is
    reported, never put in the transcript. Without it usage is estimated and marked
    ``"estimated": True``. Every request is kept in ``.requests``.
    """

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self._log: list[tuple[list[Message], int, list[dict], Any]] = []
        self._copies: dict[int, list[Message]] = {}
        self._requests: list[dict] = []
        self._sizer = _PromptSizer()

    @classmethod
    def from_run(cls, run: Any) -> ScriptedModel:
        """Replay a recorded run: its model replies, in request order, sub-agents included.

        ``run`` is a `RunResult` or the path of one saved with ``RunResult.save``.
        The tools run again for real when the replayed model calls them.
        """
        if isinstance(run, (str, Path)):
            data = json.loads(Path(run).read_text(encoding="utf-8"))
            events = data["events"]
        else:
            events = [e.to_dict() for e in run.events]
        steps = []
        for event in events:
            if event["type"] == "model_reply":
                step = dict(event["message"])
                if not event["usage"].get("estimated"):
                    step["usage"] = event["usage"]
                steps.append(step)
        return cls(steps)

    @property
    def requests(self) -> list[dict]:
        """Every request received, in order, as ``{"messages", "tools", "tool_choice"}``.

        Each ``messages`` is the list as it was at that request, a list of its own:
        what the run appended later is not in it.
        """
        for copy, length, tools, tool_choice in self._log[len(self._requests):]:
            self._requests.append(
                {"messages": copy[:length], "tools": tools, "tool_choice": tool_choice})
        return self._requests

    @property
    def remaining(self) -> int:
        """How many scripted replies are left (never below 0, even after running out)."""
        return max(0, len(self.steps) - len(self._log))

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply:
        n = len(self._log)
        self._record(messages, tools, tool_choice)
        if n >= len(self.steps):
            total = f"{len(self.steps)} step" + ("" if len(self.steps) == 1 else "s")
            raise ScriptExhausted(
                f"ScriptedModel has no step left for request #{n + 1} "
                f"(the script has {total}): add a step, or lower max_turns"
            )
        step = self.steps[n]
        message = step(list(messages)) if callable(step) else step
        estimate = estimate_tokens(self._sizer.chars(messages, tools))
        usage = message.get("usage") if isinstance(message, dict) else None
        # A hand-written step may leave out call ids: number them by request, so the
        # ids stay unique across the run (the loop never runs a call id twice).
        return parse_reply(message, usage, estimate=estimate, id_prefix=f"call_{n + 1}")

    def _record(self, messages: list[Message], tools: list[dict], tool_choice: Any) -> None:
        """Remember this request in O(new messages); `requests` rebuilds it when asked.

        Copying the whole transcript at every request would make a long run quadratic
        in time and memory (and slow Python's garbage collector). A run only appends to
        its messages, so one private copy per transcript, grown by what was appended
        since the last request, plus this request's length, give back the exact list.
        """
        copy = self._copies.get(id(messages))
        if copy is None or len(copy) > len(messages) or (
                copy and messages[len(copy) - 1] is not copy[-1]):
            copy = self._copies[id(messages)] = []  # a list we have not seen: copy afresh
        copy.extend(messages[len(copy):])
        self._log.append((copy, len(messages), list(tools or []), tool_choice))


PROVIDER_VARIABLES = ("HARNESS_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY")


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server, through the official SDK.

    Unset arguments come from the environment: ``HARNESS_MODEL`` (the model name),
    ``OPENAI_BASE_URL`` (leave unset for OpenAI itself) and ``OPENAI_API_KEY``
    (optional for a local server such as Ollama or vLLM). Extra keyword arguments go
    to ``openai.OpenAI`` (for example ``max_retries=2, timeout=60``). The key is never
    printed, logged or put in an error message.
    """

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        **client_kwargs: Any,
    ) -> None:
        self.model = model or os.environ.get("HARNESS_MODEL")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if not self.model:
            raise ValueError(
                "No model name: pass OpenAIModel(model=...) or set HARNESS_MODEL "
                "(for example HARNESS_MODEL=gpt-4o-mini)"
            )
        if key is None and self.base_url is None:
            raise ValueError(
                "No API key for the OpenAI API: set OPENAI_API_KEY, or set OPENAI_BASE_URL "
                "to a local server (Ollama, vLLM) that needs no key"
            )
        import openai  # imported here so `import harness` stays light and works offline

        self._openai = openai
        self._secret = key
        self._sizer = _PromptSizer()
        self._replies = 0
        # A keyless local server still needs a non-empty string for the SDK.
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key or "no-key",
                                    **client_kwargs)

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r})"

    def complete(
        self, messages: list[Message], tools: list[dict], tool_choice: Any = None
    ) -> ModelReply:
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:  # the API refuses tools=[]; with no tools, leave both keys out
            request["tools"] = tools
            request["tool_choice"] = tool_choice or "auto"
        try:
            response = self.client.chat.completions.create(**request)
        except self._openai.OpenAIError as exc:
            raise ModelError(self._redact(f"{type(exc).__name__}: {exc}")) from None
        except ValueError as exc:  # a 200 whose body is not JSON, or not a completion
            raise ModelError(self._redact(
                f"the server's reply could not be read ({type(exc).__name__}: {exc})"
            )) from None
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise ModelError("the server's reply had no choice with a message")
        usage = getattr(response, "usage", None)
        usage = usage.model_dump() if usage is not None else None
        estimate = 0 if usage else estimate_tokens(self._sizer.chars(messages, tools))
        # Some local servers send tool calls without ids: number them by reply, so they
        # stay unique across the run (the loop never runs a call id twice).
        self._replies += 1
        return parse_reply(message.model_dump(exclude_none=True), usage, estimate=estimate,
                           id_prefix=f"call_{self._replies}")

    def _redact(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return text
