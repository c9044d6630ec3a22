"""`OpenAIModel`: any OpenAI-compatible chat-completions server, through the `openai` SDK.

    model = OpenAIModel()   # HARNESS_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, HARNESS_MODEL_SETTINGS
    model = OpenAIModel("qwen2.5:7b", base_url="http://localhost:11434/v1", timeout=60)
    model = OpenAIModel("deepseek-chat",
                        settings={"extra_body": {"thinking": {"type": "disabled"}}})

One request, from the loop's arguments to a `ModelReply`:

    messages, tools, tool_choice
      -> the request: settings, the system prompt's role, a tool_choice this server takes
      -> streamed (the default): chunks -> model_delta reports -> Assembler -> one message
         or whole (settings={"stream": False}): one chat.completion
      -> parse_reply -> ModelReply(content, tool_calls, usage, finish_reason, reasoning)

A server that refuses a named ``tool_choice`` (HTTP 400 naming it) gets the same
request once more with the next weaker choice: ``"required"``, then ``"auto"`` with a
reminder appended to what is sent. The model remembers what worked; each weakened
request is reported (``tool_choice_fallback``). OpenAI, DeepSeek, GLM, Ollama, vLLM
and OpenRouter all speak this protocol. The key is never printed, logged or put in an
error message; nor is a password in the base URL.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ..models import Message, ModelError, ModelReply, Report, estimate_tokens, message_chars
from .settings import TOOL_CHOICES, ModelSettings, check_request_keys
from .stream_reader import StreamReader, Whole, as_dict
from .streaming import Assembler
from .wire import parse_reply

# What moves the harness to a live model: these, and the ones the openai SDK reads itself.
# Tests and the notebook runner remove them all, so they always run offline.
PROVIDER_VARIABLES = ("HARNESS_MODEL", "HARNESS_MODEL_SETTINGS", "OPENAI_BASE_URL",
                      "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

CALL_NOW = "<reminder>Call the {name} tool now, before anything else.</reminder>"
CALL_ANY = "<reminder>Call one of your tools now, before you answer.</reminder>"


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server, through the official SDK.

    Unset arguments come from the environment: ``HARNESS_MODEL`` (the model name),
    ``OPENAI_BASE_URL`` (leave unset for OpenAI itself) and ``OPENAI_API_KEY``
    (optional for a local server such as Ollama or vLLM). ``settings`` are request
    settings (``temperature``, ``max_tokens``, ``extra_body``...) and the harness's own
    (``stream``, ``system_role``...), over those in ``HARNESS_MODEL_SETTINGS`` (JSON):
    see model_settings.py. Extra keyword arguments go to ``openai.OpenAI`` (for example
    ``max_retries=2, timeout=60``).
    """

    def __init__(self, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, *, settings: Mapping[str, Any] | None = None,
                 **client_kwargs: Any) -> None:
        self.model = model or os.environ.get("HARNESS_MODEL")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        raw_key = api_key or os.environ.get("OPENAI_API_KEY") or ""
        key = raw_key.strip() or None  # a key pasted with a space or a newline still works
        if not self.model:
            raise ValueError("No model name: pass OpenAIModel(model=...) or set HARNESS_MODEL "
                             "(for example HARNESS_MODEL=gpt-4o-mini)")
        if key is None and self.base_url is None:
            raise ValueError("No API key for the OpenAI API: set OPENAI_API_KEY, or set "
                             "OPENAI_BASE_URL to a local server (Ollama, vLLM) that needs no key")
        self.settings = ModelSettings.resolve(settings)
        import openai  # imported here so `import harness` stays light and works offline

        self._openai = openai
        self._secrets = sorted({s for s in (raw_key, key, _password(self.base_url)) if s
                                and len(s) >= 4}, key=len, reverse=True)
        self._replies = 0
        self.forced_tool_choice = self.settings.forced_tool_choice  # lowered when refused
        self.stream_usage = self.settings.stream_usage
        self.context_window = self.settings.context_window  # shown by the plan panel
        self.partial: ModelReply | None = None  # what arrived of a request that never finished
        # A keyless local server still needs a non-empty string for the SDK.
        self.client = openai.OpenAI(base_url=self.base_url, api_key=key or "no-key",
                                    **client_kwargs)
        check_request_keys(self.settings.request, self.client.chat.completions.create)

    def __repr__(self) -> str:
        return f"OpenAIModel(model={self.model!r}, base_url={safe_url(self.base_url)!r})"

    def complete(self, messages: list[Message], tools: list[dict], tool_choice: Any = None,
                 *, report: Report | None = None) -> ModelReply:
        report = report or _quiet
        self.partial, refused = None, "refused earlier with this model object"
        for _ in range(len(TOOL_CHOICES) + 1):  # every retry gives something up for good
            choice, reminder = self._forcing(tool_choice if tools else None)
            if tools and choice != tool_choice:
                report("tool_choice_fallback", requested=tool_choice, sent=choice,
                       reminder=reminder, reason=refused)
            request = self._request(messages, tools, choice, reminder)
            try:
                return self._send(request, messages, tools, report)
            except (self._openai.BadRequestError, self._openai.UnprocessableEntityError) as exc:
                refused = self._step_down(exc, request)
                if refused is None:
                    raise ModelError(self.redact(f"{type(exc).__name__}: {exc}")) from None
            except self._openai.OpenAIError as exc:
                raise ModelError(self.redact(f"{type(exc).__name__}: {exc}")) from None
            except ValueError as exc:  # a 200 whose body is not JSON, or not a completion
                raise ModelError(self.redact(f"the server's reply could not be read "
                                              f"({type(exc).__name__}: {exc})")) from None
        raise ModelError("the server kept refusing the request's settings")

    # -- the request ----------------------------------------------------------------------

    def _forcing(self, choice: Any) -> tuple[Any, str | None]:
        """The tool_choice to send for ``choice``, and the reminder that replaces forcing."""
        wanted = "named" if isinstance(choice, dict) else choice
        if wanted not in ("named", "required"):
            return choice, None
        allowed = self.forced_tool_choice
        if TOOL_CHOICES.index(wanted) >= TOOL_CHOICES.index(allowed):
            return choice, None
        if allowed == "required":
            return "required", None
        name = (choice.get("function") or {}).get("name") if wanted == "named" else None
        return "auto", CALL_NOW.format(name=name) if name else CALL_ANY

    def _request(self, messages: list[Message], tools: list[dict], choice: Any,
                 reminder: str | None) -> dict[str, Any]:
        sent = self._system_role(messages)
        if reminder:  # the caller's list is never changed: the reminder is only sent
            sent = [*sent, {"role": "user", "content": reminder}]
        request = {**self.settings.request, "model": self.model, "messages": sent}
        if tools:  # the API refuses tools=[]; with no tools, leave both keys out
            request["tools"] = tools
            request["tool_choice"] = choice or "auto"
        if self.settings.stream:
            request["stream"] = True
            if self.stream_usage:
                request["stream_options"] = {"include_usage": True}
        return request

    def _system_role(self, messages: list[Message]) -> list[Message]:
        """The messages with the system prompt said by the configured role."""
        role = self.settings.system_role
        if role == "system" or not messages or messages[0].get("role") != "system":
            return messages
        first, rest = messages[0], messages[1:]
        if role == "developer":
            return [{**first, "role": "developer"}, *rest]
        if rest and rest[0].get("role") == "user" and isinstance(rest[0].get("content"), str):
            return [{**rest[0], "content": f"{first['content']}\n\n{rest[0]['content']}"},
                    *rest[1:]]
        return [{**first, "role": "user"}, *rest]

    def _step_down(self, refusal: Exception, request: dict) -> str | None:
        """After a 400: give up what the server named, for good; None if nothing can go."""
        said = self.redact(str(getattr(refusal, "message", refusal)))[:300]
        choice = request.get("tool_choice")
        level = "named" if isinstance(choice, dict) else choice
        if _names(refusal, "tool_choice") and level in ("named", "required"):
            self.forced_tool_choice = TOOL_CHOICES[TOOL_CHOICES.index(level) + 1]
            return said
        if _names(refusal, "stream_options") and "stream_options" in request:
            self.stream_usage = False
            return said
        return None

    # -- the reply ------------------------------------------------------------------------

    def _send(self, request: dict, messages: list[Message], tools: list[dict],
              report: Report) -> ModelReply:
        if request.get("stream"):
            message, usage, finish = self._streamed(request, report)
        else:
            message, usage, finish = _whole(as_dict(
                self.client.chat.completions.create(**request)))
        estimate = 0 if usage else estimate_tokens(sum(map(message_chars, messages))
                                                   + len(str(tools)))
        # Some servers send tool calls without ids: number them by reply, so they stay
        # unique across the run (the loop never runs a call id twice).
        self._replies += 1
        return parse_reply(message, usage, estimate=estimate, finish_reason=finish,
                           id_prefix=f"call_{self._replies}")

    def _streamed(self, request: dict, report: Report) -> tuple[dict, dict | None, str | None]:
        """Read a streamed reply, reporting each piece; keep what arrived if it stops."""
        reader = StreamReader(lambda: self.client.chat.completions.create(**request))
        built = Assembler()
        try:
            for chunk in reader.chunks(report):
                if isinstance(chunk, Whole):  # the server ignored stream=True
                    return _whole(chunk)
                for kind, data in built.feed(chunk):
                    report("model_delta", kind=kind, **data)
        except self._openai.OpenAIError as exc:
            if not built.chunks:
                raise  # the request itself failed: complete() decides what follows
            self.partial = parse_reply(built.message())
            raise ModelError(self.redact(f"the stream broke off after {built.described()} "
                                          f"({type(exc).__name__}: {exc})")) from None
        except BaseException:  # cancelled, out of time, interrupted: keep what arrived
            self.partial = parse_reply(built.message())
            raise
        finally:
            reader.stop()
        if built.finish_reason is None:
            self.partial = parse_reply(built.message())
            raise ModelError(f"the stream ended before the reply was finished (no "
                             f"finish_reason) after {built.described()}")
        return built.message(), built.usage, built.finish_reason

    def redact(self, text: str) -> str:
        """``text`` with the key, and a password in the base URL, masked."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


def _whole(completion: dict) -> tuple[dict, dict | None, str | None]:
    """The message, usage and finish_reason of the first choice of a whole completion."""
    choices = completion.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else {}
    choice = choice if isinstance(choice, dict) else {}
    if not isinstance(choice.get("message"), dict):
        raise ModelError("the server's reply had no choice with a message")
    usage = completion.get("usage")
    return choice["message"], usage if isinstance(usage, dict) else None, \
        choice.get("finish_reason")


def _names(error: Exception, field: str) -> bool:
    """Does this refusal name ``field`` (in its message, its ``param`` or its body)?"""
    said = " ".join(str(part) for part in (getattr(error, "param", None), error,
                                           getattr(error, "body", None)))
    return field in said


def _password(url: str | None) -> str | None:
    return urlsplit(url).password if url else None


def safe_url(url: str | None) -> str | None:
    """``url`` with a password and query values masked: fit to print."""
    if not url:
        return url
    parts = urlsplit(url)
    if parts.password is None and not parts.query:
        return url
    netloc = parts.netloc
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    query = "&".join(f"{name}=***" for name, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _quiet(event_type: str | None = None, **data: Any) -> None:
    """The ``report`` of a model called outside a run: nobody is listening."""
