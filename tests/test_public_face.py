"""The root's face: the names users import from ``jupyter_analyst``, lazily (PEP 562), with
the signatures they had; and the ``agent`` and ``turns`` faces export what they list."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys

import pytest

ROOT_NAMES = {"run_turn", "run_sql_step", "TurnRequest", "SqlStepRequest", "SqlStep", "TurnSummary", "AnalystConfig",
              "ModelSettings", "AnalystError", "__version__"}


def test_the_root_exports_the_turn_api():
    import jupyter_analyst

    assert set(jupyter_analyst.__all__) == ROOT_NAMES
    for name in ROOT_NAMES:
        assert getattr(jupyter_analyst, name) is not None
    from jupyter_analyst.errors import AnalystError
    from jupyter_analyst.turns import run_turn

    assert jupyter_analyst.AnalystError is AnalystError and jupyter_analyst.run_turn is run_turn


def test_run_turn_keeps_its_signature():
    import jupyter_analyst

    params = inspect.signature(jupyter_analyst.run_turn).parameters
    assert list(params) == ["request", "config", "model", "on_event", "launcher", "pool", "background", "live", "turn"]
    assert all(p.kind is p.KEYWORD_ONLY for name, p in params.items() if name != "request")
    assert list(jupyter_analyst.TurnRequest.model_fields) == [
        "prompt", "source", "thread_id", "rerun", "user", "notebook", "attached"]


def test_importing_the_root_imports_no_engine():
    out = subprocess.run([sys.executable, "-c", (
        "import json, sys, jupyter_analyst; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('jupyter_analyst.', 'openai', 'duckdb')))))"
    )], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)) <= {"jupyter_analyst._lazy", "jupyter_analyst._version"}


@pytest.mark.parametrize("package", ["jupyter_analyst.agent", "jupyter_analyst.turns", "jupyter_analyst.agent.tools"])
def test_a_face_exports_every_name_it_lists(package):
    face = importlib.import_module(package)
    for name in face.__all__:
        assert getattr(face, name) is not None, f"{package}.{name}"
    with pytest.raises(AttributeError):
        face.no_such_name  # noqa: B018
