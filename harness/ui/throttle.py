"""`Throttle`: redraw at most a few times a second, and never leave the last change unseen.

A streamed reply brings dozens of pieces a second, and a scripted run hundreds of
events: redrawing a widget for each one floods the browser with messages it cannot
show any faster than the eye reads them. A throttle draws at once when it has been
quiet for a while, and otherwise once more when the interval is up:

    events:   x  x x x x       x x              x
    draws:    D----------D     D----------D     D        (at most one per interval)
              ^ at once  ^ the trailing draw: the last change is always drawn

The trailing draw runs on a timer thread, so a run that goes quiet (a long tool call,
a model thinking) still shows its latest state. ``flush()`` draws now: at the end of a
run, so the final picture never waits. A browser tab has no threads (harness/browser.py):
there the next request after the interval draws the change, or ``flush()`` does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from .. import browser


class Throttle:
    """Calls ``draw`` at most once every ``interval`` seconds, and after the last request."""

    def __init__(self, draw: Callable[[], None], interval: float = 0.045) -> None:
        self.draw, self.interval = draw, interval
        self.draws = 0
        self._lock = threading.Lock()  # guards the timer and the time of the last draw
        self._drawing = threading.RLock()  # one draw at a time, whichever thread asks
        self._last = float("-inf")
        self._timer: threading.Timer | None = None

    def request(self) -> None:
        """Something changed: draw now, or when the interval is up."""
        with self._lock:
            if self._timer is not None:
                return  # a draw is already due: it will show this change too
            wait = self._last + self.interval - time.monotonic()
            if wait > 0 and browser.IN_BROWSER:
                return  # no timer thread: a later request, or flush(), draws this change
            if wait > 0:
                timer = threading.Timer(wait, self._due)
                timer.args, timer.daemon = (timer,), True  # _due(timer): is it still due?
                self._timer = timer
                timer.start()
                return
            self._last = time.monotonic()
        self._run()

    def flush(self) -> None:
        """Draw now, and cancel a draw that was due."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._last = time.monotonic()
        self._run()

    def _due(self, timer: threading.Timer) -> None:
        with self._lock:
            if self._timer is not timer:
                return  # flushed meanwhile: that draw showed this change
            self._timer = None
            self._last = time.monotonic()
        self._run()

    def _run(self) -> None:
        with self._drawing:
            self.draws += 1
            self.draw()
