"""How an HTTP server's answers are read: one message at most `MAX_LINE` bytes, as on stdio.

The SDK reads a JSON answer whole (``response.aread()``) and only then parses it, and the
call path cuts the text to what the model reads after that: a server that answers 64 MB
made the harness hold some 400 MB first. This transport sits under the SDK's HTTP client
(httpx2) and counts each answer's bytes as they arrive, before anyone keeps them:

    application/json      the whole body is one message: at most `MAX_LINE` bytes
    text/event-stream     one event (up to its blank line) is one message: the same
    compressed bodies     asked for uncompressed; gzip or deflate anyway are unpacked a
                          piece at a time, and counted unpacked (a small bomb stays small)

Past the limit it stops reading and closes the response. A JSON answer to a request
becomes a JSON-RPC error for that request, so the call ends with a message the model
reads and the server goes on serving; an event stream fails the way the SDK fails any
broken stream (the request it carried gets the error). Memory stays at about the limit.
An old SSE server sends every answer on one stream, where the SDK itself stops at 1 MiB
an event: past that the connection ends, as a stdio server's does past its line, and
the server starts again for the next run.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2

from .transport import MAX_LINE

BOUNDARY = re.compile(rb"\r\n\r\n|\n\n|\r\r")  # the blank line that ends an event
PIECE = 1 << 16  # bytes unpacked at a time from a compressed body


class AnswerTooLong(httpx2.SSEError):
    """A server's message was longer than the harness reads (the SDK handles this type
    as a broken stream: the request waiting on it gets the error)."""


def too_long(limit: int) -> str:
    """What the model reads when a server's answer was cut off."""
    return (f"its answer was longer than {limit:,} bytes; the harness stopped reading it "
            f"(one message from a server may hold at most {limit:,} bytes)")


class CappedTransport(httpx2.AsyncBaseTransport):
    """httpx2's transport, with every answer read at most ``limit`` bytes a message."""

    def __init__(self, limit: int = MAX_LINE, inner: httpx2.AsyncBaseTransport | None = None
                 ) -> None:
        self.limit = limit
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await self.inner.handle_async_request(request)
        headers = httpx2.Headers(response.headers)
        encoding = headers.get("content-encoding", "identity").strip().lower()
        stream: Any = response.stream
        if encoding not in ("", "identity"):
            stream = _Unpacked(stream, encoding)
            del headers["content-encoding"]
            headers.pop("content-length", None)
        kind = headers.get("content-type", "").partition(";")[0].strip().lower()
        events = kind == "text/event-stream"
        stream = _Capped(stream, self.limit, events=events, request_id=_request_id(request))
        return httpx2.Response(response.status_code, headers=headers, stream=stream,
                               extensions=response.extensions, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def client(limit: int = MAX_LINE, **options: Any) -> httpx2.AsyncClient:
    """An httpx2 client whose answers are read within ``limit`` (``options``: httpx2's)."""
    return httpx2.AsyncClient(transport=CappedTransport(limit), **options)


class _Capped(httpx2.AsyncByteStream):
    """A response body read at most ``limit`` bytes a message (see the module's table)."""

    def __init__(self, stream: Any, limit: int, *, events: bool, request_id: Any) -> None:
        self.stream, self.limit, self.events, self.request_id = stream, limit, events, request_id

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.events:
            async for chunk in self._events():
                yield chunk
            return
        body = bytearray()
        async for chunk in self.stream:
            body += chunk
            if len(body) > self.limit:
                del body[:]
                await self.aclose()
                if self.request_id is None:
                    raise AnswerTooLong(too_long(self.limit))
                yield _error(self.request_id, too_long(self.limit))
                return
        yield bytes(body)

    async def _events(self) -> AsyncIterator[bytes]:
        since, tail = 0, b""  # bytes since the last blank line; the last few, for one split
        async for chunk in self.stream:
            ends = [m.end() for m in BOUNDARY.finditer(tail + chunk)]
            since = len(tail) + len(chunk) - ends[-1] if ends else since + len(chunk)
            if since > self.limit:
                await self.aclose()
                raise AnswerTooLong(too_long(self.limit))
            tail = (tail + chunk)[-3:]
            yield chunk

    async def aclose(self) -> None:
        await self.stream.aclose()


class _Unpacked(httpx2.AsyncByteStream):
    """A gzip or deflate body, unpacked `PIECE` bytes at a time; any other packing is
    refused (the harness asked for none)."""

    def __init__(self, stream: Any, encoding: str) -> None:
        self.stream, self.encoding = stream, encoding

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.encoding not in ("gzip", "x-gzip", "deflate"):
            await self.aclose()
            raise AnswerTooLong(f"its answer came packed as {self.encoding!r}, which the "
                                "harness does not read (it asks for no packing)")
        unpack = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib, by its header
        try:
            async for chunk in self.stream:
                while chunk:
                    piece = unpack.decompress(chunk, PIECE)
                    chunk = unpack.unconsumed_tail
                    if piece:
                        yield piece
            if rest := unpack.flush():  # the little it held back (a match under way)
                yield rest
        except zlib.error as exc:
            raise AnswerTooLong(f"its {self.encoding} answer could not be unpacked: "
                                f"{exc}") from None

    async def aclose(self) -> None:
        await self.stream.aclose()


def _request_id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the request a POST carries (None for a notification, a GET)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError, TypeError):
        return None
    return message.get("id") if isinstance(message, dict) else None


def _error(request_id: Any, message: str) -> bytes:
    """A JSON-RPC error answer to ``request_id``, in place of an answer too long to read."""
    return json.dumps({"jsonrpc": "2.0", "id": request_id,
                       "error": {"code": -32603, "message": message}}).encode()
