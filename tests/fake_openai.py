"""A local OpenAI-compatible chat-completions server for tests: real HTTP, scripted answers.

`OpenAIModel` is tested through the real ``openai`` SDK over a real socket, so the
tests see what a learner's run sees: retries, timeouts, status errors, odd replies.
The server listens on 127.0.0.1 only, on a free port, and answers
``POST /v1/chat/completions`` from a queue, one entry per request, in order::

    with FakeOpenAI([server_error(500), reply(content="Hi")]) as server:
        model = OpenAIModel(model="m", base_url=server.base_url, api_key="sk-test")
        model.complete([{"role": "user", "content": "Hello"}], [])
        assert len(server.requests) == 2          # the SDK retried the 500

In a test, take the ``fake_openai`` fixture (a started server with an empty queue,
closed after the test) and queue answers with ``fake_openai.add(...)``. Load the
fixture with ``pytest_plugins = ("tests.fake_openai",)`` in the test module. (This
module holds no assertions; PYTEST_DONT_REWRITE lets a test module both import it
and load it as a plugin without pytest warning that it cannot rewrite it.)

Fault vocabulary, one function per kind of answer (each returns a `Scripted`):

| entry                           | what the client receives                                  |
|---------------------------------|-----------------------------------------------------------|
| ``reply(message, usage=...)``   | 200, a proper ``chat.completion``; a plain dict in the     |
|  or a plain message dict        | queue means ``reply(that_dict)``; ``usage=None`` omits it  |
| ``http_error(status, ...)``     | that status with an OpenAI-style error body and headers    |
| ``rate_limited(retry_after_ms)``| 429 with ``retry-after-ms`` (and ``Retry-After: 0``)       |
| ``server_error(status=500)``    | a 5xx the SDK retries, told to wait ``retry-after-ms: 10`` |
| ``unauthorized()``              | 401 ``invalid_api_key`` (the SDK does not retry it)        |
| ``slow(seconds, then)``         | waits, then answers ``then``: exceeds a client timeout     |
| ``dropped()``                   | the socket closes with no response at all                  |
| ``invalid_json()``              | 200, ``application/json``, a body that is not JSON         |
| ``no_choices()``                | 200, a completion whose ``choices`` is ``[]``              |
| ``choice_without_message()``    | 200, ``choices[0]`` has no ``message``                     |

(The last two are sent whole even when the request asked to stream: a broken server.)

A request with ``"stream": true`` gets any ``reply(...)`` as a real server streams it:
server-sent events over chunked HTTP, text a word per chunk, each tool call named first
and its arguments in pieces, then ``finish_reason``, then usage when the request asked
for it (``stream_options.include_usage``), then ``data: [DONE]``. ``streamed(...)``
scripts the stream itself:

| entry                                  | what the client receives                        |
|----------------------------------------|-------------------------------------------------|
| ``streamed(reply(...), interval=0.01)``| the reply's chunks, one every ``interval`` s    |
| ``streamed(..., drop_after=5)``        | 5 chunks, then the socket closes mid-body       |
| ``streamed(..., stall_after=3)``       | 3 chunks, then silence until the client leaves  |
| ``streamed(..., finish=False)``        | every chunk but the one with ``finish_reason``  |
| ``streamed(..., done=False)``          | the body ends properly, but without ``[DONE]``  |
| ``streamed(chunks=[...])``             | exactly these chunk dicts (a string is sent as  |
|                                        | ``data: <string>``, a ``raw_sse(...)`` verbatim)|
| ``keep_alive(interval=0.05)``          | only ``: keep-alive`` comments, until the client|
|                                        | leaves; ``whole=True``: a JSON reply that sends |
|                                        | blank lines while it "waits" (DeepSeek's way)  |

Provider modes (provider_rules.py) answer a request that breaks a provider's
documented rule with that provider's 400, before the queue is consulted:
``FakeOpenAI(rules=[deepseek_thinking()])``. ``stream_usage=False`` makes a server
that never sends usage in a stream, whatever the request asks. The time the server saw
a streaming client leave is kept in ``disconnects`` (``time.monotonic()``), and each
chunk's send time in ``sent``.

Every request is recorded (`Recorded`: path, lower-cased headers, parsed JSON body),
faults included, so a test can count retries and read the ``Authorization`` header.
A request that finds the queue empty gets a 500 with ``x-should-retry: false`` and a
body that says so, instead of hanging. The SDK ignores ``Retry-After: 0`` and backs
off 0.5 s or more: a retried fault without ``retry-after-ms`` (``dropped()``, a bare
``http_error(500)``) costs that much per retry, so pass ``max_retries=0`` or send
``QUICK_RETRY`` headers to keep a test fast. ``close()`` wakes any ``slow`` answer still
waiting and joins every handler thread.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from typing_extensions import Self

HOST = "127.0.0.1"
CREATED = 1_700_000_000  # a fixed timestamp: replies are byte-for-byte reproducible
DEFAULT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
QUICK_RETRY = {"retry-after-ms": "10"}  # the SDK waits 10 ms instead of its 0.5 s backoff


@dataclass(frozen=True)
class Scripted:
    """One queued answer. Build it with the functions below rather than by hand."""

    status: int = 200
    body: Any = None  # a dict is sent as JSON, bytes as they are
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False
    choices: list[dict] | None = None  # when set, the body is a chat.completion around them
    usage: dict | None = None
    stream: dict | None = None  # streamed(...): how to stream it (chunks, interval, faults)


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the raw text when it was not JSON
    client: tuple[str, int] | None = None  # the client's address and port


def reply(
    message: dict | None = None,
    *,
    content: str | None = None,
    tool_calls: list[dict] | None = None,
    usage: dict | None = DEFAULT_USAGE,
    finish_reason: str | None = None,
) -> Scripted:
    """A normal 200 answer carrying one assistant message (``finish_reason`` follows it,
    unless given: ``"length"`` for an answer cut off)."""
    message = {"role": "assistant", "content": None, **(message or {})}
    if content is not None:
        message["content"] = content
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    finish = finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
    return Scripted(choices=[{"index": 0, "message": message, "finish_reason": finish}],
                    usage=usage)


def http_error(
    status: int,
    message: str = "scripted error",
    *,
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Scripted:
    """A status error with the body shape OpenAI uses: ``{"error": {message, type, code}}``."""
    body = {"error": {"message": message, "type": "fake_error", "param": None, "code": code}}
    return Scripted(status=status, body=body, headers=dict(headers or {}))


def rate_limited(retry_after_ms: int = 10) -> Scripted:
    """429 Too Many Requests; ``retry-after-ms`` keeps the SDK's wait short."""
    headers = {"retry-after-ms": str(retry_after_ms), "Retry-After": "0"}
    return http_error(429, "Rate limit reached", code="rate_limit_exceeded", headers=headers)


def server_error(status: int = 500) -> Scripted:
    """A 5xx (500, 502, 503...) that the SDK retries after 10 ms."""
    return http_error(status, "The server had an error", headers=QUICK_RETRY)


def unauthorized(message: str = "Incorrect API key provided.") -> Scripted:
    """401 ``invalid_api_key``. ``message`` may quote the key, as some servers do."""
    return http_error(401, message, code="invalid_api_key")


def slow(seconds: float, then: Scripted | None = None) -> Scripted:
    """Wait ``seconds`` before answering ``then`` (a plain reply by default)."""
    return replace(then or reply(content="late"), delay=seconds)


def dropped() -> Scripted:
    """Read the request, then close the socket without sending a response."""
    return Scripted(drop=True)


def invalid_json() -> Scripted:
    """200 with ``Content-Type: application/json`` and a truncated body."""
    return Scripted(body=b'{"id": "chatcmpl-broken", "choices": [')


def no_choices() -> Scripted:
    """200, a well-formed completion whose ``choices`` list is empty."""
    return Scripted(choices=[], usage=DEFAULT_USAGE)


def choice_without_message() -> Scripted:
    """200, a completion whose only choice has no ``message``."""
    return Scripted(choices=[{"index": 0, "finish_reason": "stop"}], usage=DEFAULT_USAGE)


def streamed(entry: Scripted | None = None, *, chunks: list | None = None,
             interval: float = 0.0, drop_after: int | None = None,
             stall_after: int | None = None, finish: bool = True,
             done: bool = True) -> Scripted:
    """A streamed answer: ``entry``'s reply cut into chunks, or exactly ``chunks``
    (``done=False``: the body ends properly without the closing ``data: [DONE]``)."""
    how = {"chunks": chunks, "interval": interval, "drop_after": drop_after,
           "stall_after": stall_after, "finish": finish, "done": done}
    return replace(entry or Scripted(), stream=how)


class RawSSE(str):
    """Text a stream sends exactly as it is (a comment, odd line endings...)."""


def raw_sse(text: str) -> RawSSE:
    """A piece of a stream sent verbatim: ``raw_sse(": keep-alive\\n\\n")``."""
    return RawSSE(text)


def keep_alive(interval: float = 0.05, *, whole: bool = False,
               comment: str = ": keep-alive") -> Scripted:
    """A server that only keeps the connection busy, until the client leaves: a stream of
    SSE comments every ``interval`` seconds, or (``whole=True``) a 200 JSON reply whose
    body is blank lines, as DeepSeek sends while a request waits."""
    line = "\n" if whole else f"{comment}\n\n"
    return Scripted(stream={"keep_alive": interval, "line": line, "whole": whole})


def sse_chunks(choice: dict, usage: dict | None, *, finish: bool = True) -> list[dict]:
    """One choice's message cut into ``chat.completion.chunk`` deltas, as OpenAI sends
    them: the role first, a word of text (reasoning, refusal) per chunk, the citations
    (``annotations``) in one chunk, each call's id and name, then its arguments 7
    characters at a time, then ``finish_reason``."""
    message, out = choice["message"], [{"role": "assistant", "content": None}]
    for key in ("reasoning_content", "reasoning", "refusal"):
        out += [{key: word} for word in _words(message.get(key))]
    content = message.get("content")
    if isinstance(content, list):  # content parts go out one part per chunk
        out += [{"content": [part]} for part in content]
    else:
        out += [{"content": word} for word in _words(content)]
    if message.get("annotations"):  # citations: one chunk after the text, as OpenAI sends them
        out.append({"annotations": message["annotations"]})
    for index, call in enumerate(message.get("tool_calls") or ()):
        head = {k: v for k, v in call.items() if k != "function"}
        name = call["function"]["name"]
        out.append({"tool_calls": [{"index": index, **head,
                                    "function": {"name": name, "arguments": ""}}]})
        args = call["function"]["arguments"]
        out += [{"tool_calls": [{"index": index, "function": {"arguments": args[i:i + 7]}}]}
                for i in range(0, len(args), 7)]
    chunks = [{"index": 0, "delta": delta, "finish_reason": None} for delta in out]
    if finish:
        chunks.append({"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]})
    result = [{"choices": [c]} for c in chunks]
    if usage is not None:
        result.append({"choices": [], "usage": usage})
    return result


def _words(text: Any) -> list[str]:
    return re.findall(r"\s*\S+\s*", text) if isinstance(text, str) else []


def _wrap(entry: Scripted, request_body: Any, n: int) -> tuple[int, dict[str, str], bytes]:
    """Turn a queued entry into the status, headers and bytes that go on the wire."""
    body = entry.body
    if entry.choices is not None:
        model = request_body.get("model", "m") if isinstance(request_body, dict) else "m"
        body = {"id": f"chatcmpl-fake-{n}", "object": "chat.completion", "created": CREATED,
                "model": model, "choices": entry.choices}
        if entry.usage is not None:
            body["usage"] = entry.usage
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return entry.status, {"Content-Type": "application/json", **entry.headers}, data


class FakeOpenAI:
    """The server: start it (or use ``with``), queue answers, read ``requests``."""

    def __init__(self, script: Iterable[Scripted | dict] = (), *,
                 rules: Iterable[Callable[[Any], Scripted | None]] = (),
                 stream_usage: bool = True) -> None:
        self.rules = list(rules)
        self.stream_usage = stream_usage
        self.disconnects: list[float] = []
        self.sent: list[float] = []
        self.requests: list[Recorded] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.add(*script)

    def add(self, *entries: Scripted | dict) -> Self:
        """Queue more answers; a plain dict is an assistant message (``reply(dict)``)."""
        with self._lock:
            self._queue.extend(e if isinstance(e, Scripted) else reply(e) for e in entries)
        return self

    @property
    def remaining(self) -> int:
        """How many queued answers no request has taken yet."""
        with self._lock:
            return len(self._queue)

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies of every request received, in order."""
        with self._lock:
            return [r.body for r in self.requests]

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` (or ``OPENAI_BASE_URL``)."""
        if self._httpd is None:
            raise RuntimeError("the fake server is not started: use start() or `with`")
        return f"http://{HOST}:{self._httpd.server_address[1]}/v1"

    def start(self) -> Self:
        self._httpd = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        self._httpd.daemon_threads = False  # so server_close() joins every handler
        self._httpd.block_on_close = True
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.01}, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake sleeping answers, and wait for every handler to finish."""
        if self._httpd is None:
            return
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
        self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, recorded: Recorded) -> tuple[Scripted, int]:
        with self._lock:
            self.requests.append(recorded)
            n = len(self.requests)
            for rule in self.rules:  # a provider's documented rule, broken: its 400
                refusal = rule(recorded.body)
                if refusal is not None:
                    return refusal, n
            if not self._queue:
                exhausted = http_error(500, f"fake_openai: no scripted answer left for "
                                       f"request #{n}", headers={"x-should-retry": "false"})
                return exhausted, n
            return self._queue.popleft(), n


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 5  # a client that connects and never sends cannot hold close() forever

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            headers = {k.lower(): v for k, v in self.headers.items()}
            recorded = Recorded("POST", self.path, headers, body, self.client_address)
            if self.path.rstrip("/") != "/v1/chat/completions":
                with server._lock:
                    server.requests.append(recorded)
                self._send(404, {}, b'{"error": {"message": "fake_openai: unknown path"}}')
                return
            entry, n = server._take(recorded)
            if entry.delay and server._closing.wait(entry.delay):
                return  # the server is closing: give up on the late answer
            if entry.drop:
                self.close_connection = True
                return
            wants_stream = isinstance(body, dict) and body.get("stream") is True
            whole = entry.choices and all("message" in c for c in entry.choices)
            if entry.stream is not None or (wants_stream and whole):
                self._stream(entry, body, n)
                return
            self._send(*_wrap(entry, body, n))

        def _stream(self, entry: Scripted, body: Any, n: int) -> None:
            """Server-sent events over chunked HTTP/1.1, chunk by chunk."""
            how = entry.stream or {"chunks": None, "interval": 0.0, "drop_after": None,
                                   "stall_after": None, "finish": True}
            if "keep_alive" in how:
                self._keep_alive(how)
                return
            chunks = how["chunks"]
            if chunks is None:
                asked = bool((body.get("stream_options") or {}).get("include_usage"))
                usage = entry.usage if asked and server.stream_usage else None
                chunks = sse_chunks(entry.choices[0], usage, finish=how["finish"])
            model = body.get("model", "m") if isinstance(body, dict) else "m"
            head = {"id": f"chatcmpl-fake-{n}", "object": "chat.completion.chunk",
                    "created": CREATED, "model": model}
            self.protocol_version = "HTTP/1.1"
            self.close_connection = True
            try:
                self.send_response(entry.status)
                self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i, chunk in enumerate([*chunks, *(["[DONE]"] if how.get("done", True)
                                                      else [])]):
                    if i == how["drop_after"]:
                        self.connection.shutdown(socket.SHUT_RDWR)  # mid-body: no last chunk
                        return
                    if i == how["stall_after"]:
                        self._wait_for_the_client_to_leave()
                        return
                    if i and how["interval"] and self._client_left(how["interval"]):
                        return
                    if isinstance(chunk, RawSSE):
                        self._chunk(chunk.encode())
                    else:
                        data = chunk if isinstance(chunk, str) else json.dumps({**head, **chunk})
                        self._chunk(f"data: {data}\n\n".encode())
                    with server._lock:
                        server.sent.append(time.monotonic())
                self._chunk(b"")
            except (BrokenPipeError, ConnectionResetError):
                with server._lock:
                    server.disconnects.append(time.monotonic())

        def _keep_alive(self, how: dict) -> None:
            """Comments (or blank lines) every ``interval`` s until the client leaves."""
            self.protocol_version = "HTTP/1.1"
            self.close_connection = True
            kind = "application/json" if how["whole"] else "text/event-stream; charset=utf-8"
            try:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    self._chunk(how["line"].encode())
                    with server._lock:
                        server.sent.append(time.monotonic())
                    if self._client_left(how["keep_alive"]):
                        return
            except (BrokenPipeError, ConnectionResetError):
                with server._lock:
                    server.disconnects.append(time.monotonic())

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _wait_for_the_client_to_leave(self) -> None:
            while not server._closing.is_set() and not self._client_left(0.01):
                pass

        def _client_left(self, seconds: float) -> bool:
            """Wait up to ``seconds``; True (and the time kept) if the client hung up."""
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0 and not server._closing.is_set():
                readable, _, _ = select.select([self.connection], [], [], min(left, 0.01))
                if readable and not self.connection.recv(1024):
                    with server._lock:
                        server.disconnects.append(time.monotonic())
                    return True
            return server._closing.is_set()

        def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
            try:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): nothing left to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep pytest output clean

    return Handler


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started fake server with an empty queue; closed after the test."""
    with FakeOpenAI() as server:
        yield server
