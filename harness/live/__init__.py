"""Live models (lesson 12): `OpenAIModel` over the `openai` SDK, its settings, what real
providers add to a reply (wire.py), streaming, and the endpoint probe."""

from .openai_model import OpenAIModel
from .settings import ModelSettings
from .wire import parse_reply

__all__ = ["ModelSettings", "OpenAIModel", "parse_reply"]
