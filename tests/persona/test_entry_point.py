"""The persona is offered to Jupyter AI by an entry point and imported only by its manager."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points


def test_the_persona_is_registered_for_jupyter_ais_persona_manager():
    (point,) = [p for p in entry_points(group="jupyter_ai.personas") if p.name == "analyst"]
    assert point.value == "jupyter_analyst.persona.analyst:AnalystPersona"


def test_without_the_extra_the_package_imports_and_only_the_persona_module_needs_it():
    # As in an environment without Jupyter AI (the import of its manager fails).
    code = textwrap.dedent("""
        import json, sys
        sys.modules["jupyter_ai_persona_manager"] = None
        import jupyter_analyst, jupyter_analyst.persona, jupyter_analyst.persona.chat_message, jupyter_analyst.persona.service_finder
        import jupyter_analyst.server, jupyter_analyst.cli, jupyter_analyst.magics
        try:
            import jupyter_analyst.persona.analyst
        except ImportError as exc:
            failed = exc.name
        else:
            failed = None
        print(json.dumps({"failed": failed, "face": jupyter_analyst.persona.__all__}))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"failed": "jupyter_ai_persona_manager", "face": []}
