"""Conversation modes: not every message is a request for analysis.

- **chat**: a greeting, thanks, or a question about the assistant itself is answered
  directly, without tools (no schema lookups, no kernel);
- **analysis**: everything else. Within it, the model acts on a clear request and, through
  the ``clarify`` tool, asks when a request is ambiguous; the candidate interpretations are
  kept as an open question item in the agent state until the user picks one.

The chat test is deliberately narrow (short messages that are only a greeting or only about
the assistant): sending a real question to the chat mode would be worse than giving a
greeting the tools.
"""

from __future__ import annotations

import re
from typing import Literal

Mode = Literal["chat", "analysis"]

_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|howdy|yo|good (morning|afternoon|evening)|thanks|thank you|thx|cheers|bye|goodbye)"
    r"( there| again| a lot| so much)?( analyst)?[\s!.,:)]*$"
)
_ABOUT_ME = re.compile(
    r"^((who|what) are you|what can you do|what do you do|how do you work|what are your (tools|capabilities)"
    r"|help|what is jupyter-analyst|introduce yourself)[\s?!.]*$"
)


def classify(prompt: str) -> Mode:
    """The mode a prompt is answered in.

    >>> [classify(p) for p in ["Hello!", "thanks a lot", "What can you do?", "hi, revenue by region?"]]
    ['chat', 'chat', 'chat', 'analysis']
    """
    text = " ".join(prompt.lower().split())
    if len(text) > 80:
        return "analysis"
    return "chat" if _GREETING.match(text) or _ABOUT_ME.match(text) else "analysis"
