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
         both read by the harness from the bytes, in a thread of its own (stream_reader.py):
         at most max_reply_chars, within max_reply_seconds, a stream never silent for
         longer than max_idle_seconds; finished by a finish_reason or by [DONE]
      -> parse_reply -> ModelReply(content, tool_calls, usage, finish_reason, reasoning)

A server that refuses a named ``tool_choice`` (HTTP 400 naming it) gets the same
request once more with the next weaker choice: ``"required"``, then ``"auto"`` with a
reminder appended to what is sent. The model remembers what worked; each weakened
request is reported (``tool_choice_fallback``). OpenAI, DeepSeek, GLM, Ollama, vLLM
and OpenRouter all speak this protocol. The key is never printed, logged or put in an
error message; nor is a password in the base URL (in any of its forms), nor the value
of a header or query setting whose name says it holds a secret (``api-key``,
``Authorization``...).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import warnings
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from ..models import Message, ModelError, ModelReply, Report, estimate_tokens, message_chars
from .settings import TOOL_CHOICES, ModelSettings, check_request_keys
from .stream_reader import HTTPReply, ReplyTooLarge, StreamReader, Whole
from .streaming import Assembler
from .wire import KEPT, chars_in, parse_reply, read_finish

# What moves the harness to a live model: these, and the ones the openai SDK reads itself.
# Tests and the notebook runner remove them all, so they always run offline.
PROVIDER_VARIABLES = ("HARNESS_MODEL", "HARNESS_MODEL_SETTINGS", "OPENAI_BASE_URL",
                      "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

CALL_NOW = "<reminder>Call the {name} tool now, before anything else.</reminder>"
CALL_ANY = "<reminder>Call one of your tools now, before you answer.</reminder>"
SECRET_NAME = re.compile(r"auth|key|token|secret|passw|cookie|session|credential|signature",
                         re.I)  # a header or query parameter whose value is kept secret
_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str, only ever a lone one
BYTES_PER_CHAR = 6  # a JSON escape (\\u00e9) is six bytes: the most a character may take


Within = tuple[float | None, float | None, tuple[str, str]]  # seconds, idle: their names


class Reading(NamedTuple):
    """One reply as it was read: the message, its usage and finish_reason, its chunks."""

    message: dict
    usage: dict | None
    finish_reason: str | None
    chunks: int = 0


class OpenAIModel:
    """Any OpenAI-compatible chat-completions server, through the official SDK.

    Unset arguments come from the environment: ``HARNESS_MODEL`` (the model name),
    ``OPENAI_BASE_URL`` (leave unset for OpenAI itself) and ``OPENAI_API_KEY``
    (optional for a local server such as Ollama or vLLM). ``settings`` are request
    settings (``temperature``, ``max_tokens``, ``extra_body``...) and the harness's own
    (``stream``, ``system_role``...), over those in ``HARNESS_MODEL_SETTINGS`` (JSON):
    see live/settings.py. Extra keyword arguments go to ``openai.OpenAI`` (for example
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
        request = self.settings.request
        self._secrets = secrets_of(
            (raw_key, key), self.base_url,
            [request.get("extra_headers"), client_kwargs.get("default_headers")],
            [request.get("extra_query"), client_kwargs.get("default_query")])
        self._replies = 0
        self.forced_tool_choice = self.settings.forced_tool_choice  # lowered when refused
        self.stream_usage = self.settings.stream_usage
        self.context_window = self.settings.context_window  # shown by the plan panel
        self.partial: ModelReply | None = None  # what arrived of a request that never finished
        # A keyless local server still needs a non-empty string for the SDK. In the browser
        # edition httpx2 warns that the browser pools connections itself: nothing to act on.
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The following transport option", UserWarning)
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
            except ModelError as exc:
                raise ModelError(self.redact(str(exc))) from None
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
        sent = _writable(self._outgoing(self._system_role(messages)))
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

    def _outgoing(self, messages: list[Message]) -> list[Message]:
        """The messages as sent: an assistant message without what is kept but never sent
        back (citations), its plain reasoning cut to ``max_echoed_reasoning_chars``."""
        cap, sent = self.settings.max_echoed_reasoning_chars, []
        for message in messages:
            long = [key for key in ("reasoning_content", "reasoning") if cap is not None
                    and isinstance(message.get(key), str) and len(message[key]) > cap]
            if message.get("role") == "assistant" and (long or any(k in message for k in KEPT)):
                message = {k: v for k, v in message.items() if k not in KEPT}
                for key in long:
                    note = (f"\n[... {len(message[key]) - cap:,} more characters of "
                            "reasoning, not sent back]")
                    message[key] = message[key][:max(0, cap - len(note))] + note
            sent.append(message)
        return sent

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
        message, usage, finish, _ = self._read(request, report)
        try:
            finish = read_finish(finish)  # "max_tokens" -> "length"; "error": no answer
        except ModelError:
            self.partial = parse_reply(message)
            raise
        estimate = 0 if usage else estimate_tokens(sum(map(message_chars, messages))
                                                   + len(str(tools)))
        # Some servers send tool calls without ids: number them by reply, so they stay
        # unique across the run (the loop never runs a call id twice).
        self._replies += 1
        return parse_reply(message, usage, estimate=estimate, finish_reason=finish,
                           id_prefix=f"call_{self._replies}")

    def _open(self, request: dict) -> HTTPReply:
        """Send ``request``; the response, its body not read yet (the harness reads it)."""
        opened = self.client.chat.completions.with_streaming_response.create(**request)
        cap = self.settings.max_reply_chars
        return HTTPReply(opened.__enter__(), streamed=bool(request.get("stream")),
                         max_bytes=cap * BYTES_PER_CHAR + 65536,
                         cap=f"max_reply_chars ({cap:,} characters)")

    def _read(self, request: dict, report: Report, within: Within | None = None) -> Reading:
        """Send ``request`` and read the reply, streamed or whole, within its limits
        (``within``: other limits than the settings'); report each piece of a stream;
        keep what arrived if it stops."""
        settings = self.settings
        seconds, idle, names = within or (
            settings.max_reply_seconds,
            settings.max_idle_seconds if request.get("stream") else None,
            ("max_reply_seconds", "max_idle_seconds"))
        reader = StreamReader(lambda: self._open(request), seconds=seconds, idle=idle,
                              names=names)
        built = Assembler(settings.max_reply_chars)
        try:
            for chunk in reader.chunks(report):
                if isinstance(chunk, Whole):  # not streamed, or the server ignored stream=True
                    return Reading(*self._completion(chunk))
                before = built.progress
                for kind, data in built.feed(chunk):
                    report("model_delta", kind=kind, **data)
                if built.progress != before:
                    reader.heard()
        except self._openai.OpenAIError as exc:
            if not built.chunks:
                raise  # the request itself failed: complete() decides what follows
            self.partial = parse_reply(built.message())
            raise ModelError(self.redact(f"the stream broke off after {built.described()} "
                                          f"({type(exc).__name__}: {exc})")) from None
        except BaseException:  # too large, out of time, cancelled: keep what arrived
            self.partial = parse_reply(built.message())
            raise
        finally:
            reader.stop()
        if built.finish_reason is None and not getattr(reader.stream, "done", False):
            self.partial = parse_reply(built.message())
            raise ModelError(f"the stream ended before the reply was finished (no "
                             f"finish_reason, no [DONE]) after {built.described()}")
        return Reading(built.message(), built.usage, built.finish_reason, built.chunks)

    def _completion(self, completion: dict) -> tuple[dict, dict | None, str | None]:
        """The message, usage and finish_reason of a whole completion's first choice."""
        error = completion.get("error")
        if error and not completion.get("choices"):  # a 200 that carries an error
            said = error.get("message") if isinstance(error, dict) else error
            raise ModelError(self.redact(f"the server answered with an error: {said}"[:500]))
        message, usage, finish = _whole(completion)
        cap = self.settings.max_reply_chars
        if chars_in(message) > cap:
            raise ReplyTooLarge(f"the reply passed max_reply_chars ({cap:,} characters)")
        return message, usage, finish

    def redact(self, text: str) -> str:
        """``text`` with every secret masked: the key, the base URL's password (as it is,
        decoded, and in a ``Basic`` header), the values of secret headers and queries.
        A secret shorter than four characters is masked where it stands alone."""
        for secret in self._secrets:
            if len(secret) >= 4:
                text = text.replace(secret, "***")
            else:
                text = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])",
                              "***", text)
        return text


def _whole(completion: dict) -> tuple[dict, dict | None, str | None]:
    """The message, usage and finish_reason of the first choice of a whole completion
    (a chat.completion, or a ``Whole`` a stream turned out to be)."""
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


def _writable(messages: list[Message]) -> list[Message]:
    """``messages`` as UTF-8 can carry them: a lone surrogate a provider sent (valid
    JSON: ``"\\udc80"``) goes back as U+FFFD, or the request could not be encoded."""
    text = json.dumps(messages, ensure_ascii=False, default=str)
    return json.loads(_SURROGATE.sub("\ufffd", text)) if _SURROGATE.search(text) else messages


def secrets_of(keys: Iterable[str | None], url: str | None,
               headers: Iterable[Any], queries: Iterable[Any]) -> list[str]:
    """Every string that must never be shown, longest first: the keys; the URL's
    password in every form it can take in a message; the values of headers and query
    parameters whose names say they hold a secret, with a token after its scheme and a
    ``Basic`` header's ``user:password``."""
    found = {k for k in keys if k}
    found |= {k.strip() for k in found}
    parts = urlsplit(url) if url else None
    if parts is not None and parts.password:
        passwords = {parts.password, unquote(parts.password)}
        passwords |= {quote(p, safe="") for p in passwords}
        users = {parts.username or "", unquote(parts.username or "")}
        found |= passwords
        found |= {_b64(f"{user}:{p}") for user in users for p in passwords}
    pairs = parse_qsl(parts.query, keep_blank_values=True) if parts is not None else []
    pairs += [(name, value) for given in (*headers, *queries) if isinstance(given, Mapping)
              for name, value in given.items()]
    for name, value in pairs:
        if isinstance(name, str) and SECRET_NAME.search(name) and isinstance(value, str):
            found |= _secret_forms(value.strip())
    found = {s for s in found if s and s.strip()}
    return sorted(found, key=len, reverse=True)


def _secret_forms(value: str) -> set[str]:
    """A secret value, the token after its scheme (``Bearer x``), a Basic header's
    decoded ``user:password`` and its password."""
    forms = {value, unquote(value)}
    scheme, _, token = value.partition(" ")
    if token.strip():
        forms.add(token.strip())
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token.strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                pair = ""
            forms |= {pair, pair.partition(":")[2]} if ":" in pair else set()
    return forms


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


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
