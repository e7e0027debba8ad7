"""Testing aids shipped with the package: a scripted OpenAI-compatible model server.

The demo, our tests and anyone else's can drive the real ``openai`` SDK path offline.
"""

from .script import (
    LABEL, Script, ScriptedCall, ScriptedTurn, Step, call_step, load_script, python_step, sql_step, text_step,
)
from .in_process import TurnRunner
from .model_server import MODEL_NAME, ScriptedModelServer

__all__ = [
    "LABEL", "MODEL_NAME", "Script", "ScriptedCall", "ScriptedModelServer", "ScriptedTurn", "Step",
    "TurnRunner", "call_step", "load_script", "python_step", "sql_step", "text_step",
]
