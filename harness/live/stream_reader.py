"""Reading a live stream in a thread of its own, so that a stop closes it at once.

    server --chunks--> reader thread --queue--> the model's thread --> report(...)
                                                  | nothing for HEARTBEAT seconds:
                                                  +--> report()  (does the run go on?)

A model waiting on a silent server is stuck in a socket read, and the run's cancel or
``max_seconds`` cannot reach it there. So the SDK's stream is read by a thread of its
own, and the model's thread waits on a queue instead: every `HEARTBEAT` seconds without
a chunk it calls ``report()`` with no event: observers hear nothing, and it raises `RunOver` once
the run has stopped (control.py, ``relay``); the model then calls `StreamReader.stop`,
which shuts the socket, so the server sees the connection close within ~0.1 s.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

HEARTBEAT = 0.04  # seconds without a chunk before the model checks that the run goes on


class StreamReader:
    """Reads a stream in a thread of its own, handing chunks over through a queue.

    ``open_stream()`` sends the request and returns the SDK's stream. Whatever it or
    the reading raises is raised again in the caller's thread.
    """

    _END = object()

    def __init__(self, open_stream: Callable[[], Any]) -> None:
        self.items: queue.SimpleQueue = queue.SimpleQueue()
        self.stream: Any = None
        self.stopped = threading.Event()
        self.finished = False  # read to the end: the connection may go back to the pool
        threading.Thread(target=self._read, args=(open_stream,), daemon=True,
                         name="harness-stream").start()

    def chunks(self, report: Callable[..., Any]) -> Iterator[Any]:
        """Each chunk as it comes; while none comes, ``report()`` every `HEARTBEAT` seconds
        (it tells observers nothing and raises once the run has stopped)."""
        while True:
            try:
                item = self.items.get(timeout=HEARTBEAT)
            except queue.Empty:
                report()  # no news: only asks whether the run goes on (raises if not)
                continue
            if item is self._END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def stop(self) -> None:
        """Stop reading and shut the connection now, even while a read is waiting.

        A stream read to its end is left alone: its connection is kept for the next
        request (shutting it down would break that request).
        """
        self.stopped.set()
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

    def _read(self, open_stream: Callable[[], Any]) -> None:
        try:
            self.stream = open_stream()
            response = getattr(self.stream, "response", None)
            if self.stopped.is_set():
                return  # stopped while connecting: close at once (finally)
            if response is not None and "json" in response.headers.get("content-type", ""):
                self.items.put(Whole(json.loads(response.read())))  # stream=True ignored
            else:
                for chunk in self.stream:
                    if self.stopped.is_set():
                        break
                    self.items.put(as_dict(chunk))
            self.finished = not self.stopped.is_set()
            self.items.put(self._END)
        except BaseException as exc:  # handed to the caller's thread
            self.items.put(exc)
        finally:
            if self.stream is not None and hasattr(self.stream, "close"):
                self.stream.close()


class Whole(dict):
    """A whole ``chat.completion``, from a server that answered ``stream=True`` at once."""


def as_dict(obj: Any) -> dict:
    """An SDK object as the plain dict the server sent (fields it left out stay out)."""
    if isinstance(obj, dict):
        return obj
    return obj.model_dump(exclude_unset=True, warnings=False)
