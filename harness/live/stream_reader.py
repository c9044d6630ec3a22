"""Reading a reply in a thread of its own, in bounded time and memory.

    server --bytes--> reader thread: server-sent events, or one whole JSON body, each
                      refused once it passes its size --queue--> the model's thread
                                                                   | every HEARTBEAT s:
                                                                   +--> report(), limits

A model waiting on a silent server is stuck in a socket read, and the run's cancel or
``max_seconds`` cannot reach it there. So the reply is read by a thread of its own, and
the model's thread waits on a queue instead: at least every `HEARTBEAT` seconds, chunks
or none, it calls ``report()`` with no event: observers hear nothing, and it raises
`RunOver` once the run has stopped (control.py, ``relay``); the model then calls
`StreamReader.stop`, which shuts the socket, so the server sees the connection close
within ~0.1 s and nothing goes on reading. The same checks end a request that takes
longer than its time limit, or a stream that sends nothing of the reply for too long
(keep-alive comments and empty chunks are nothing): `ReplyTimedOut`.

The reader thread runs in a copy of the caller's context (`contextvars`): what the run's
caller set in a ``ContextVar`` (a tracing span, a durable workflow's state) reaches the
SDK's request as it would inline.

A browser tab has no threads (harness/browser.py): there the reply is read inline, and
``report()`` and the limits are checked after each piece of bytes (`NO_NEWS` when it
completed no chunk: a keep-alive comment, blank lines), so a server that keeps the line
busy is cut as it is here; a silent one holds the run until its next bytes or the
browser's own timeout.

The bytes are read here, not by the SDK, so that a size limit holds before anything is
held whole: a body, or one event of a stream, larger than ``max_bytes`` is refused
(`ReplyTooLarge`) as it arrives, however it was compressed on the wire.
"""

from __future__ import annotations

import contextvars
import json
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any

from .. import browser
from ..models import ModelError
from .settings import MAX_DEPTH, too_deep

HEARTBEAT = 0.04  # seconds between checks that the run goes on, chunks or none
READ_AHEAD = 256  # chunks the reader thread may read ahead of the model's thread
NO_NEWS = object()  # an `HTTPReply` read bytes that completed no chunk: time to check
_EOL = re.compile(rb"[\r\n]")


class ReplyTooLarge(ModelError):
    """A reply passed ``max_reply_chars`` (or its size on the wire): no more is read."""


class ReplyTimedOut(ModelError):
    """A request passed ``max_reply_seconds``, or a stream ``max_idle_seconds``."""


class StreamReader:
    """Reads a reply in a thread of its own, handing chunks over through a queue.

    ``open_stream()`` sends the request and returns something to iterate for chunks
    (an `HTTPReply`), with a ``response`` whose socket `stop` can shut. Whatever it or
    the reading raises is raised again in the caller's thread. ``seconds``: the most the
    whole request may take; ``idle``: the most that may pass without `heard` being
    called (the caller calls it when a chunk added to the reply); ``names`` say which
    settings these are, for the error.
    """

    _END = object()
    _NOTHING = object()

    def __init__(self, open_stream: Callable[[], Any], *, seconds: float | None = None,
                 idle: float | None = None,
                 names: tuple[str, str] = ("max_reply_seconds", "max_idle_seconds")) -> None:
        self.items: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
        self.stream: Any = None
        self.stopped = threading.Event()
        self.finished = False  # read to the end: the connection may go back to the pool
        self.seconds, self.idle, self.names = seconds, idle, names
        self.started = self.heard_at = time.monotonic()
        self.inline = open_stream if browser.IN_BROWSER else None  # read by chunks() itself
        if self.inline is None:
            threading.Thread(target=contextvars.copy_context().run,
                             args=(self._read, open_stream), daemon=True,
                             name="harness-stream").start()

    def heard(self) -> None:
        """Something of the reply arrived: the idle clock starts again."""
        self.heard_at = time.monotonic()

    def chunks(self, report: Callable[..., Any]) -> Iterator[Any]:
        """Each chunk as it comes; at least every `HEARTBEAT` seconds ``report()`` (it
        tells observers nothing and raises once the run has stopped) and the limits."""
        if self.inline is not None:
            yield from self._read_inline(report)
            return
        checked = time.monotonic()
        while True:
            try:
                item = self.items.get(timeout=HEARTBEAT)
            except queue.Empty:
                item = self._NOTHING
            if item is self._END:
                return
            if isinstance(item, BaseException):
                raise item
            now = time.monotonic()
            if item is self._NOTHING or now - checked >= HEARTBEAT:
                report()  # no news: only asks whether the run goes on (raises if not)
                self._in_time(now)
                checked = now
            if item is not self._NOTHING:
                yield item

    def stop(self) -> None:
        """Stop reading and shut the connection now, even while a read is waiting.

        A stream read to its end is left alone: its connection is kept for the next
        request (shutting it down would break that request).
        """
        self.stopped.set()
        if self.inline is not None and self.stream is not None:
            self.stream.close()
            return
        if self.finished:
            return
        network = getattr(getattr(self.stream, "response", None), "extensions", {}) \
            .get("network_stream")
        sock = network.get_extra_info("socket") if network is not None else None
        if sock is not None:
            try:  # wakes the reading thread; closing alone would wait for the next chunk
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _in_time(self, now: float) -> None:
        busy = getattr(self.stream, "keep_alives", 0)
        said = f", only keep-alive comments ({busy})" if busy and self.heard_at == \
            self.started else ""
        if self.seconds is not None and now - self.started > self.seconds:
            raise ReplyTimedOut(f"no complete reply within {self.seconds:g} s "
                                f"({self.names[0]}){said}")
        if self.idle is not None and now - self.heard_at > self.idle:
            said = f", only keep-alive comments ({busy})" if busy else ""
            raise ReplyTimedOut(f"nothing of the reply for {self.idle:g} s "
                                f"({self.names[1]}){said}")

    def _put(self, item: Any) -> bool:
        """Hand ``item`` over, waiting while the queue is full; False once stopped."""
        while not self.stopped.is_set():
            try:
                self.items.put(item, timeout=HEARTBEAT)
                return True
            except queue.Full:
                continue
        return False

    def _read_inline(self, report: Callable[..., Any]) -> Iterator[Any]:
        """The browser's way: read here, asking between chunks whether the run goes on."""
        report()
        self.stream = self.inline()
        for chunk in self.stream:
            report()
            self._in_time(time.monotonic())
            if chunk is not NO_NEWS:
                yield as_dict(chunk)
        self.finished = True

    def _read(self, open_stream: Callable[[], Any]) -> None:
        try:
            self.stream = open_stream()
            if self.stopped.is_set():
                return  # stopped while connecting: close at once (finally)
            for chunk in self.stream:
                if chunk is NO_NEWS:
                    continue  # the model's thread checks every HEARTBEAT anyway
                if self.stopped.is_set() or not self._put(as_dict(chunk)):
                    break
            self.finished = not self.stopped.is_set()
            self._put(self._END)
        except BaseException as exc:  # handed to the caller's thread
            self._put(exc)
        finally:
            if self.stream is not None and hasattr(self.stream, "close"):
                self.stream.close()


class Whole(dict):
    """A whole ``chat.completion`` (a reply not streamed, or a server that ignored
    ``stream=True`` and answered at once)."""


class HTTPReply:
    """One HTTP response, read from its bytes: server-sent events, one chunk dict each,
    or one whole JSON body (a `Whole`), with `NO_NEWS` after each piece of bytes read (a
    reader without a thread checks its limits then). A body, a line or an event of more
    than ``max_bytes`` is refused as it arrives. ``done``: the closing ``data: [DONE]``
    came; ``keep_alives``: how many SSE comments came."""

    def __init__(self, opened: Any, *, streamed: bool, max_bytes: int, cap: str) -> None:
        self.opened = opened  # the SDK's APIResponse, holding the httpx response
        self.response = getattr(opened, "http_response", opened)
        self.streamed, self.max_bytes, self.cap = streamed, max_bytes, cap
        self.done = False
        self.keep_alives = 0

    def __iter__(self) -> Iterator[Any]:
        kind = (self.response.headers.get("content-type") or "").lower()
        try:
            if "event-stream" in kind or (self.streamed and "json" not in kind):
                yield from self._events(self.response.iter_bytes())
                return
            body = yield from self._body()
            if body.lstrip().startswith((b"data:", b":")):  # events, whatever the header said
                yield from self._events([body])
            else:
                yield Whole(_object(body.decode("utf-8", "replace"),
                                    f"the body ({kind or 'no content type'})"))
        except Exception as exc:  # a broken connection is reported as the SDK reports it
            error = _connection_error(exc, self.response)
            if error is exc:
                raise
            raise error from exc

    def close(self) -> None:
        self.opened.close()

    def _too_large(self, what: str) -> ReplyTooLarge:
        return ReplyTooLarge(f"{what} passed {self.max_bytes:,} bytes, more than "
                             f"{self.cap} allows: no more of it was read")

    def _body(self) -> Generator[object, None, bytes]:
        """The whole body (returned), `NO_NEWS` after each piece of it."""
        length = self.response.headers.get("content-length") or ""
        if length.isdigit() and int(length) > self.max_bytes:
            raise self._too_large("the reply's body")
        body = bytearray()
        for piece in self.response.iter_bytes():
            body += piece
            if len(body) > self.max_bytes:
                raise self._too_large("the reply's body")
            yield NO_NEWS
        return bytes(body)

    def _events(self, pieces: Iterable[bytes]) -> Iterator[Any]:
        """The SSE protocol (lines end with CR, LF or CRLF; ``:`` starts a comment; an
        empty line ends an event), each event's ``data`` read as one JSON chunk."""
        line, data, size, after_cr = bytearray(), [], 0, False
        for piece in pieces:
            start = 0
            for match in _EOL.finditer(piece):
                end = match.start()
                if after_cr and end == start and piece[end] == 10:  # the LF of a CRLF
                    after_cr, start = False, end + 1
                    continue
                line += piece[start:end]
                after_cr, start = piece[end] == 13, end + 1
                if line.startswith(b":"):
                    self.keep_alives += 1
                elif line:
                    name, _, value = bytes(line).partition(b":")
                    if name == b"data":
                        data.append(value[1:] if value.startswith(b" ") else value)
                        size += len(value) + 1
                        if size > self.max_bytes:
                            raise self._too_large("one streamed event")
                elif data:  # an empty line: the event is complete
                    text = b"\n".join(data).decode("utf-8", "replace")
                    data, size = [], 0
                    if text.startswith("[DONE]"):
                        self.done = True
                        return
                    yield self._chunk(text)
                line.clear()
            if start < len(piece):
                after_cr = False
                line += piece[start:]
                if len(line) > self.max_bytes:
                    raise self._too_large("one streamed line")
            yield NO_NEWS
        if line.startswith(b"data:"):  # a last event the server did not end with a line
            data.append(bytes(line[5:]).lstrip(b" "))
        text = b"\n".join(data).decode("utf-8", "replace")
        if text.startswith("[DONE]"):
            self.done = True
        elif text:
            yield self._chunk(text)

    def _chunk(self, text: str) -> dict:
        chunk = _object(text, "a streamed event")
        error = chunk.get("error")
        if error:  # as the SDK does: an error in the stream ends it with its message
            import openai

            said = error.get("message") if isinstance(error, dict) else None
            raise openai.APIError(said if isinstance(said, str) and said else
                                  "An error occurred during streaming",
                                  self.response.request, body=error)
        return chunk


def _object(text: str, what: str) -> dict:
    """The JSON object in ``text``, nested no deeper than a reply ever is."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"{what} is JSON nested too deeply to read") from None
    except ValueError:
        raise ValueError(f"{what} is not JSON: {text[:80]!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object but {type(value).__name__}: "
                         f"{text[:80]!r}")
    if too_deep(value):
        raise ValueError(f"{what} is JSON nested more than {MAX_DEPTH} levels deep")
    return value


def _connection_error(exc: Exception, response: Any) -> Exception:
    """What the SDK raises for a connection that broke, or timed out, mid-body (an
    error of httpx or of the socket); any other error as it is."""
    import openai

    transport = type(exc).__module__.partition(".")[0] in ("httpx", "httpx2", "httpcore",
                                                           "h11", "h2", "ssl")
    if not (transport or isinstance(exc, OSError)) or isinstance(exc, openai.OpenAIError):
        return exc
    request = response.request
    if "timeout" in type(exc).__name__.lower():
        return openai.APITimeoutError(request=request)
    return openai.APIConnectionError(message=f"Connection error ({type(exc).__name__}: {exc})",
                                     request=request)


def as_dict(obj: Any) -> dict:
    """An SDK object as the plain dict the server sent (fields it left out stay out)."""
    if isinstance(obj, dict):
        return obj
    return obj.model_dump(exclude_unset=True, warnings=False)
