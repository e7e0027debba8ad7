"""What a real model scores on the shipped ``sample`` suite, run as a user runs it.

``jupyter-analyst eval sample`` runs as a process against Gemma 3 270M on llama-cpp-python
(``make real-model``), then the same command against the scripted oracle: a scripted model
that runs each question's gold SQL and answers with its gold answer, in two calls a turn
(one for a question the data cannot answer). The oracle is what a perfect model scores with
the same command, suite and settings, and the fewest calls and steps it takes; each figure
of the real model is shown against it.

Everything comes from the reports the command writes (``-o REPORT.json``): tasks correct,
failure classes, model calls, tokens as the model server counted them, steps run. The
oracle's tokens are counted by the same model's tokenizer on the prompts it was sent, laid
out as the real model's chat format lays them out, so the two token figures compare. The
real model's replies are capped (:data:`REPLY_TOKENS`, the server's ``--n_predict``) and its
turns to :data:`MAX_STEPS` calls with tools, one task at a time; the model is tiny and
samples, so its score can change between runs. ``--quick`` runs the first
:data:`QUICK_TASKS` tasks of the suite.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, get_args

from jupyter_analyst.evals.harness import suite_path
from jupyter_analyst.evals.scoring import NOT_IN_DATA, Failure
from jupyter_analyst.testing import MODEL_NAME as SCRIPTED_MODEL, ScriptedModelServer
from jupyter_analyst.testing.servers.llama import MODEL_NAME, LlamaModelServer, llama_environment
from jupyter_analyst.testing.servers.llama_launcher import gemma3_prompt

from .common import Report

#: The console script next to this interpreter (the project's virtualenv).
CLI = Path(sys.executable).with_name("jupyter-analyst")
SUITE = "sample"
#: Model calls with tools per turn (then one more without tools, asking for the answer).
MAX_STEPS = 2
#: The most tokens one reply of the real model may generate (the server's cap).
REPLY_TOKENS = 128
#: Seconds a turn may take before it counts as a timeout.
TURN_TIMEOUT_S = 180
CONCURRENCY = 1
QUICK_TASKS = 3
ORACLE = "the scripted oracle (gold SQL, then the gold answer), same command"


def _tasks(quick: bool) -> list[dict[str, Any]]:
    lines = suite_path(Path(SUITE)).read_text(encoding="utf-8").splitlines()
    tasks = [json.loads(line) for line in lines if line.strip()]
    return tasks[:QUICK_TASKS] if quick else tasks


def _suite_argument(folder: Path, quick: bool) -> str:
    """``sample`` (the shipped suite, by name), or in a quick run a file of its first tasks."""
    if not quick:
        return SUITE
    subset = folder / f"{SUITE}-first-{QUICK_TASKS}.jsonl"
    subset.write_text("".join(json.dumps(t) + "\n" for t in _tasks(quick)), encoding="utf-8")
    return str(subset)


def _turns(task: dict[str, Any]) -> list[dict[str, Any]]:
    return task["turns"] if "turns" in task else [task]


def _answer_text(gold: Any) -> str:
    """A gold answer written as the eval's answer rules ask (``ANSWER:``, rows one a line).

    >>> _answer_text(2400), _answer_text([["East", 1.5], ["West", 2]])
    ('ANSWER: 2400', 'ANSWER:\\nEast | 1.5\\nWest | 2')
    """
    if isinstance(gold, list) and gold and all(isinstance(row, list) for row in gold):
        return "ANSWER:\n" + "\n".join(" | ".join(map(str, row)) for row in gold)
    if isinstance(gold, list):
        return "ANSWER: " + ", ".join(map(str, gold))
    return f"ANSWER: {gold}"


def oracle_script(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """Each question answered as a perfect analyst would: its gold SQL run, then its gold
    answer; a question the data cannot answer at once (the schema it is sent shows it)."""
    return {"turns": [
        {"match": re.escape(turn["question"]), "steps": ([] if turn["answer"] == NOT_IN_DATA else [
            {"tool_calls": [{"name": "run_sql", "arguments": {"sql": turn["gold_sql"], "name": "answer"}}]}])
         + [{"content": _answer_text(turn["answer"])}]}
        for task in tasks for turn in _turns(task)]}


def _eval(suite: str, folder: Path, base_url: str, model: str) -> tuple[dict[str, Any], float]:
    """The eval command run as a user runs it; its report and wall time."""
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "report.json"
    command = [str(CLI), "eval", suite, "-o", str(out), "--workspace", str(folder / "ws"),
               "--base-url", base_url, "--model", model, "--max-steps", str(MAX_STEPS),
               "--concurrency", str(CONCURRENCY), "--task-timeout", str(TURN_TIMEOUT_S)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    started = time.perf_counter()
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=1500)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(out.read_text(encoding="utf-8")), wall


def _oracle_tokens(server: LlamaModelServer, requests: list[dict[str, Any]],
                   script: dict[str, Any]) -> tuple[int, int]:
    """The oracle's prompt and completion tokens as the real model's server would count them:
    each request it was sent laid out in the model's chat format (with the BOS its tokenizer
    puts first), each of its replies as the text the model would have generated."""
    prompt = sum(server.count_tokens(gemma3_prompt(body.get("messages") or [], body.get("tools"))) + 1
                 for body in requests)
    completion = sum(server.count_tokens(_reply_text(step)) for turn in script["turns"] for step in turn["steps"])
    return prompt, completion


def bench_eval(report: Report, *, rows: int, repeat: int) -> None:
    built = llama_environment()
    if built is None:
        raise RuntimeError("the real model is not built: run `make real-model`")
    tasks = _tasks(report.quick)
    script = oracle_script(tasks)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        root = Path(tmp)
        suite = _suite_argument(root, report.quick)
        with LlamaModelServer(*built, n_predict=REPLY_TOKENS) as server:
            ours, ours_wall = _eval(suite, root / "real", server.base_url, MODEL_NAME)
            with ScriptedModelServer(script) as oracle_server:
                oracle, oracle_wall = _eval(suite, root / "oracle", oracle_server.base_url, SCRIPTED_MODEL)
                requests = oracle_server.requests
            oracle_tokens = _oracle_tokens(server, requests, script)
            served = server.usage()
    _report(report, ours, oracle, ours_wall=ours_wall, oracle_wall=oracle_wall, oracle_tokens=oracle_tokens)
    cut = sum(call["completion_tokens"] >= REPLY_TOKENS for call in served)
    report.note(f"the model server served {len(served)} completions, {cut} of them cut at the {REPLY_TOKENS}-token cap")
    # The model's wall time is the machine's: a shared machine's load says how far it was from idle.
    report.note(f"load average (1 min) on {os.cpu_count()} cores: {load_before:.1f} at the start, "
                f"{os.getloadavg()[0]:.1f} at the end")


def _reply_text(step: dict[str, Any]) -> str:
    """A scripted reply as the real model would write it (a call in its chat format's tags)."""
    if "content" in step:
        return step["content"]
    return "\n".join("<tool_call>\n" + json.dumps(call) + "\n</tool_call>" for call in step["tool_calls"])


def _report(report: Report, ours: dict[str, Any], oracle: dict[str, Any], *, ours_wall: float, oracle_wall: float,
            oracle_tokens: tuple[int, int]) -> None:
    mine, best = ours["totals"], oracle["totals"]
    n = mine["tasks"]
    label = f"eval `{SUITE}`" + (f" (first {n} tasks)" if n < len(_tasks(False)) else "")
    report.add(f"{label}: tasks correct, of {n}", mine["correct"], best["correct"], ORACLE, unit="tasks")
    for failure in get_args(Failure):
        report.add(f"{label}: tasks failed as {failure}", mine["failures"].get(failure, 0), n,
                   f"the {n} tasks of the suite", unit="tasks")
    report.add(f"{label}: model calls", mine["model_calls"], best["model_calls"], ORACLE, unit="calls")
    report.add(f"{label}: prompt tokens", mine["prompt_tokens"], oracle_tokens[0],
               ORACLE + ", its prompts counted by the model's tokenizer", unit="tok")
    report.add(f"{label}: completion tokens", mine["completion_tokens"], oracle_tokens[1],
               ORACLE + ", its replies counted by the model's tokenizer", unit="tok")
    report.add(f"{label}: steps run", mine["steps_executed"], best["steps_executed"], ORACLE, unit="steps")
    report.add(f"{label}: wall time of the command", ours_wall, oracle_wall, ORACLE)
    report.note(f"the real model: {mine['correct']}/{n} correct; failures: "
                + (", ".join(f"{k} {v}" for k, v in mine["failures"].items()) or "none")
                + f"; tokens counted by: {mine['tokens_counted_by']}; {mine['time_s']:.1f} s of turns")
    report.note("per task: " + "; ".join(
        f"{t['id']} {'correct' if t['correct'] else t['failure']} ({t['model_calls']} call(s), {t['steps_executed']} step(s))"
        for t in ours["tasks"]))
    report.note(f"the oracle: {best['correct']}/{best['tasks']} correct, failures: "
                + (", ".join(f"{k} {v}" for k, v in best["failures"].items()) or "none"))
    report.note(f"`jupyter-analyst eval` as a process, sandboxed kernels, --max-steps {MAX_STEPS}, --concurrency "
                f"{CONCURRENCY}, --task-timeout {TURN_TIMEOUT_S}; Gemma 3 270M Q4_K_M on llama-cpp-python, replies "
                f"capped at {REPLY_TOKENS} tokens (the server's --n_predict)")
