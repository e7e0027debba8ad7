"""Starts llama-cpp-python's OpenAI-compatible server for Gemma 3, as a local deployment would.

Run by the model server's own Python (``.venv-llm``, see llama.py), never imported by the
package's: it imports only the standard library and ``llama_cpp``, and that inside
:func:`main`. Four things the stock ``python -m llama_cpp.server`` lacks for Gemma 3:

- **A chat format that keeps the prompt.** The GGUF carries no chat template, so the server
  falls back to a llama-2 one; its ``gemma`` format drops the system message, tool messages
  and the tool definitions. :func:`gemma3_prompt` is Gemma 3's own template (the system
  text opens the first user turn; ``assistant`` is ``model``), with the tools offered and
  called as text in the Hermes convention (``<tool_call>{"name": ..., "arguments": ...}</tool_call>``)
  that llama.cpp's and Ollama's templates use for models without native calls. Tool results
  come back as user turns in ``<tool_response>``. The model answers calls as text; nothing
  parses them here, as nothing does on such a server.
- **Usage in a stream.** llama-cpp-python 0.3 sends no ``usage`` when streaming; OpenAI,
  vLLM and llama.cpp's own server send it in a last chunk with no choices when asked
  (``stream_options.include_usage``). Here it is always sent, counted from the tokens the
  model evaluated and generated (the same counts its unstreamed replies report).
- **A cap on generated tokens** (``--n_predict``, as llama.cpp's server has): a request with
  no ``max_tokens`` may otherwise run to the end of the context.
- **Weights in plain CPU buffers.** llama.cpp compiles for the build machine's CPU and, where
  it reports AMX, repacks weights into an AMX buffer at load; a virtual machine may report AMX
  and still fault on its first tile instruction (``ldtilecfg``, a segfault on the first
  completion). Repacking is off (``use_extra_bufts``): the same results, through AVX.

Each completion's counts (and the names of the tools it was offered) are also appended to
``--usage_log`` (JSON lines), for tests to compare with what the client was told.

    python llama_launcher.py --model M.gguf --host 127.0.0.1 --port P --n_predict 256 \
        [--usage_log FILE] [server options]
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: The name the chat format is registered under.
CHAT_FORMAT = "gemma3-tools"

TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
)
TOOLS_INSTRUCTION = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def _text(content: Any) -> str:
    """A message's content as text (a string, or a list of text parts).

    >>> _text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    'ab'
    >>> _text(None)
    ''
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def _call_text(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    arguments: Any = function.get("arguments") or "{}"
    try:
        arguments = json.loads(arguments)
    except (TypeError, ValueError):
        pass  # shown as sent
    return "<tool_call>\n" + json.dumps({"name": function.get("name", ""), "arguments": arguments}) + "\n</tool_call>"


def tools_text(tools: list[dict[str, Any]]) -> str:
    """How the tools are offered: their definitions, one a line, and how to call them."""
    return TOOLS_PREAMBLE + "\n".join(json.dumps(t, ensure_ascii=False) for t in tools) + TOOLS_INSTRUCTION


def gemma3_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> str:
    """The prompt Gemma 3 is given for ``messages`` and ``tools`` (its BOS is the tokenizer's).

    >>> print(gemma3_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
    <start_of_turn>user
    Be brief.
    <BLANKLINE>
    Hi<end_of_turn>
    <start_of_turn>model
    <BLANKLINE>
    >>> p = gemma3_prompt([
    ...     {"role": "user", "content": "Count"},
    ...     {"role": "assistant", "content": None, "tool_calls": [
    ...         {"id": "c1", "type": "function", "function": {"name": "run_sql", "arguments": '{"sql": "SELECT 1"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": '{"rows": 1}'},
    ... ])
    >>> print(p.split("<start_of_turn>model", 1)[1])
    <BLANKLINE>
    <tool_call>
    {"name": "run_sql", "arguments": {"sql": "SELECT 1"}}
    </tool_call><end_of_turn>
    <start_of_turn>user
    <tool_response>
    {"rows": 1}
    </tool_response><end_of_turn>
    <start_of_turn>model
    <BLANKLINE>
    """
    system = "\n\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    if tools:
        system = (system + "\n\n" if system else "") + tools_text(tools)
    turns: list[list[str]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "assistant":
            parts = [_text(message.get("content"))] + [_call_text(c) for c in message.get("tool_calls") or ()]
            speaker, text = "model", "\n".join(p for p in parts if p)
        elif role == "tool":
            speaker, text = "user", "<tool_response>\n" + _text(message.get("content")) + "\n</tool_response>"
        else:
            speaker, text = "user", _text(message.get("content"))
        if turns and turns[-1][0] == speaker:  # Gemma's turns alternate: same-speaker messages join
            turns[-1][1] += "\n\n" + text
        else:
            turns.append([speaker, text])
    if system:
        if turns and turns[0][0] == "user":
            turns[0][1] = system + "\n\n" + turns[0][1]
        else:
            turns.insert(0, ["user", system])
    body = "".join(f"<start_of_turn>{speaker}\n{text}<end_of_turn>\n" for speaker, text in turns)
    return body + "<start_of_turn>model\n"


def _install(n_predict: int, usage_log: str | None) -> None:
    """Register the chat format, and make every stream end with its usage."""
    import llama_cpp
    from llama_cpp import llama_chat_format
    from llama_cpp.llama import Llama

    @llama_chat_format.register_chat_format(CHAT_FORMAT)
    def _format(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                **_: Any) -> llama_chat_format.ChatFormatterResponse:
        return llama_chat_format.ChatFormatterResponse(prompt=gemma3_prompt(messages, tools), stop="<end_of_turn>")

    default_params = llama_cpp.llama_model_default_params

    def plain_buffers() -> Any:
        params = default_params()
        params.use_extra_bufts = False
        return params

    # Llama.__init__ takes its model parameters from this module-level function.
    llama_cpp.llama_cpp.llama_model_default_params = plain_buffers

    generate = Llama.generate

    def counted_generate(self: Llama, tokens: Any, *args: Any, **kwargs: Any) -> Any:
        # The completion evaluates exactly these prompt tokens, and keeps every generated
        # token but an end-of-generation one (as its unstreamed usage counts them).
        counts = self._usage_counts = [len(tokens), 0]
        for token in generate(self, tokens, *args, **kwargs):
            if not llama_cpp.llama_vocab_is_eog(self._model.vocab, token):
                counts[1] += 1
            yield token

    def _log(usage: dict[str, int], tools: list[dict[str, Any]] | None) -> None:
        # With the tools the call was offered, so a reader can count their share of the prompt.
        if usage_log:
            offered = [t.get("function", {}).get("name") for t in tools or []]
            with open(usage_log, "a") as out:
                out.write(json.dumps({**usage, "tools": offered}) + "\n")

    chat = Llama.create_chat_completion

    def capped_chat(self: Llama, *args: Any, **kwargs: Any) -> Any:
        asked = kwargs.get("max_tokens")
        kwargs["max_tokens"] = n_predict if asked is None or asked <= 0 else min(asked, n_predict)
        result = chat(self, *args, **kwargs)
        if not kwargs.get("stream"):
            _log(result["usage"], kwargs.get("tools"))
            return result

        def with_usage() -> Any:
            last: dict[str, Any] | None = None
            for chunk in result:
                last = chunk
                yield chunk
            prompt, completion = getattr(self, "_usage_counts", (0, 0))
            usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
            _log(usage, kwargs.get("tools"))
            yield {
                "id": last["id"] if last else "chatcmpl-usage", "object": "chat.completion.chunk",
                "created": last["created"] if last else 0, "model": last["model"] if last else "",
                "choices": [], "usage": usage,
            }

        return with_usage()

    Llama.generate = counted_generate  # type: ignore[method-assign]
    Llama.create_chat_completion = capped_chat  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    own = {"--n_predict": "256", "--usage_log": None}
    for flag in own:
        if flag in args:
            at = args.index(flag)
            own[flag] = args[at + 1]
            del args[at:at + 2]
    if "--chat_format" not in args:
        args += ["--chat_format", CHAT_FORMAT]
    _install(int(own["--n_predict"] or 256), own["--usage_log"])
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *args]
    serve()


if __name__ == "__main__":
    main()
