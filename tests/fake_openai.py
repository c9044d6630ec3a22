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
import threading
from collections import deque
from collections.abc import Iterable, Iterator
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


@dataclass
class Recorded:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the raw text when it was not JSON


def reply(
    message: dict | None = None,
    *,
    content: str | None = None,
    tool_calls: list[dict] | None = None,
    usage: dict | None = DEFAULT_USAGE,
) -> Scripted:
    """A normal 200 answer carrying one assistant message (``finish_reason`` follows it)."""
    message = {"role": "assistant", "content": None, **(message or {})}
    if content is not None:
        message["content"] = content
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    finish = "tool_calls" if message.get("tool_calls") else "stop"
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

    def __init__(self, script: Iterable[Scripted | dict] = ()) -> None:
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
            recorded = Recorded("POST", self.path, headers, body)
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
            self._send(*_wrap(entry, body, n))

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
