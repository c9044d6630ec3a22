"""Context that outlives the window (lesson 11): compaction of what each request sends,
while the run's transcript keeps every message."""

from .compaction import Compaction, request_tokens

__all__ = ["Compaction", "request_tokens"]
