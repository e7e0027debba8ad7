"""Whatever escapes a command is one error line, never a traceback; with ``--json`` the one
JSON object says so."""

from __future__ import annotations

import json

from jupyter_analyst.cli.console import main
from jupyter_analyst.sql import sources


def test_an_unexpected_failure_of_run_is_one_line_and_its_json(tmp_path, capsys, monkeypatch):
    def broken(spec, _limits):
        raise RuntimeError(f"the plugin could not open {spec}\nmore detail")

    # A source plugin that fails in its own way (not one of the errors the package raises).
    monkeypatch.setattr(sources, "_REGISTRY", list(sources._REGISTRY))
    sources.register_source("broken", lambda spec: spec.startswith("broken:"), broken)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    status = main(["run", "--db", "broken://x", "--prompt", "hi", "--workspace", str(tmp_path / "ws"), "--json",
                   "--no-summarizer"])
    out = capsys.readouterr()
    assert status == 1, out
    assert "Traceback" not in out.err
    assert out.err.strip().splitlines()[-1] == "error: RuntimeError: the plugin could not open broken://x"
    (line,) = out.out.splitlines()
    reply = json.loads(line)
    assert reply["status"] == "error" and reply["error"]["reason"] == "internal_error"
