"""Staged plans: several SQL and Python steps asked for in one ``plan`` call.

A request that needs several datasets costs one model call per query when each is its own
``run_sql`` call, and the queries run one after another. With ``plan`` the model sends the
whole shape at once: stages run in order; the steps of a ``parallel`` stage are independent
of each other (its queries run at the same time), those of a ``sequence`` stage run in the
order given. A step names the steps it needs in ``inputs``.

Everything about a plan that can be checked without running it is checked here, before
any step runs (plan.py runs it):

* its shape: at most :data:`MAX_STAGES` stages and :data:`MAX_STEPS` steps, unique step ids;
* every step's tool is ``run_sql`` or ``run_python``, and its arguments pass the same
  normalisation and payload checks as the same call made alone;
* every input is a step of the plan (``plan_undefined_input``), the inputs make no cycle
  (``plan_cycle``), and each input runs before the step that needs it (``plan_order``);
* two queries of one parallel stage do not bind the same name (which one would win?);
* the state machine can take the steps in the order they run (from the turn's state).

Each step then runs through the same guards as a single call (unknown names, the schema,
reuse by step key): a plan is a way to ask, not a way around a check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel

from ...errors import InvalidArguments
from ...events import State
from ...step_kinds import STEP_KINDS, STEP_TOOLS, StepKind, StepTool
from ..machine import allowed
from .arguments import normalize_arguments_verbose
from ..spec import spec_of

#: The most stages, and steps in all, one plan may hold.
MAX_STAGES = 8
MAX_STEPS = 16
_STEP_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
#: A plan's steps are recorded steps (STEP_TOOLS: queries and code); a step may name its tool by
#: its kind, its payload or its language ("query", "sql"; "code", "python").
_TOOL_ALIASES = {alias: kind.tool for kind in STEP_KINDS.values() for alias in (kind.name, kind.payload, kind.language)}
_MODE_ALIASES = {"parallel": "parallel", "concurrent": "parallel", "sequence": "sequence", "sequential": "sequence",
                 "serial": "sequence"}
_HINT = ('send {"stages": [{"mode": "parallel", "steps": [{"id": "q1", "tool": "run_sql", "arguments": '
         '{"sql": "...", "name": "..."}}]}, {"mode": "sequence", "steps": [{"id": "p1", "tool": "run_python", '
         '"arguments": {"code": "..."}, "inputs": ["q1"]}]}]}')


class PlanStep(BaseModel):
    """One step of a plan: a ``run_sql`` or ``run_python`` call and the steps it needs."""

    id: str
    tool: StepTool
    arguments: dict[str, Any]
    """Normalised as the same call made alone would be."""
    inputs: list[str] = []

    @property
    def kind(self) -> StepKind:
        """What the step is: a query or a code step."""
        return STEP_KINDS[self.tool]

    def summary(self) -> str:
        """What the step does, in a few words: the dataset a query makes, a code's first line."""
        kind = self.kind
        if kind.is_query:
            return f"{kind.name} → {self.arguments.get(kind.dataset_argument, '')}"
        text = str(self.arguments.get(kind.payload, ""))
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        return first if len(first) <= 80 else first[:77] + "..."


class PlanStage(BaseModel):
    """Steps that run together: all at once (``parallel``) or one after another (``sequence``)."""

    mode: Literal["parallel", "sequence"]
    steps: list[PlanStep]

    def in_order(self) -> list[PlanStep]:
        """The steps in the order they start: a parallel stage's queries (together) before
        its Python steps (one kernel runs one step at a time)."""
        if self.mode == "sequence":
            return list(self.steps)
        return [s for s in self.steps if s.kind.is_query] + [s for s in self.steps if not s.kind.is_query]


class StagedPlan(BaseModel):
    """A checked plan (see :func:`read_plan`)."""

    goal: str = ""
    stages: list[PlanStage]

    def steps(self) -> Iterator[PlanStep]:
        """Every step, stage by stage, in the order it starts."""
        for stage in self.stages:
            yield from stage.in_order()

    def refusal_from(self, state: State) -> InvalidArguments | None:
        """Why the state machine could not take the plan's steps from ``state``, if it could not."""
        current: State = "planning" if state == "error" else state
        for step in self.steps():
            spec = spec_of(step.tool)
            target = spec.state if spec is not None else None
            if target is None:
                continue
            if not allowed(current, target):
                return InvalidArguments(
                    f"step {step.id!r} ({step.tool}) may not run: the turn would be {current} and cannot move to {target}",
                    reason="invalid_state", hint="answer with what was fetched, or fetch data before analysing it",
                )
            current = target
        return None


def read_plan(raw: Mapping[str, Any]) -> tuple[StagedPlan, list[str]]:
    """The plan in ``raw`` (a ``plan`` call's arguments), checked; and the rescues it needed.

    >>> plan, _ = read_plan({"stages": [{"mode": "parallel", "steps": [
    ...     {"id": "a", "tool": "run_sql", "arguments": {"sql": "SELECT 1", "name": "one"}},
    ...     {"id": "b", "tool": "run_sql", "arguments": {"sql": "SELECT 2", "name": "two"}}]},
    ...     {"mode": "sequence", "steps": [{"id": "c", "tool": "run_python", "inputs": ["a", "b"],
    ...                                      "arguments": {"code": "print(one, two)"}}]}]})
    >>> [s.id for s in plan.steps()]
    ['a', 'b', 'c']
    >>> read_plan({"stages": [{"mode": "sequence", "steps": [
    ...     {"id": "a", "tool": "run_python", "arguments": {"code": "x = 1"}, "inputs": ["b"]},
    ...     {"id": "b", "tool": "run_python", "arguments": {"code": "y = 1"}, "inputs": ["a"]}]}]})
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.InvalidArguments: the plan's inputs make a cycle: a -> b -> a (hint: a step can only need steps that finish before it starts)

    Raises:
        InvalidArguments: reason ``invalid_plan`` (its shape), ``unknown_tool``,
            ``plan_undefined_input``, ``plan_cycle``, ``plan_order``, ``invalid_state``, or
            the reason a step's own arguments are refused with.
    """
    rescues: list[str] = []
    stages = raw.get("stages")
    if stages is None and isinstance(raw.get("steps"), list):
        if len(raw["steps"]) > MAX_STEPS:
            raise _invalid(f"the plan has more than {MAX_STEPS} steps",
                           hint="plan the first steps now and the rest after their results")
        stages = _staged_by_inputs(raw["steps"])
        rescues.append("plan:staged_by_inputs")
    if not isinstance(stages, list) or not stages:
        raise _invalid("a plan needs 'stages': a list of stages, each with its 'steps'")
    if len(stages) > MAX_STAGES:
        raise _invalid(f"the plan has {len(stages)} stages; at most {MAX_STAGES} are accepted",
                       hint="put independent steps in one parallel stage, or send the rest in a later call")
    read: list[PlanStage] = []
    seen: dict[str, int] = {}
    count = 0
    for n, stage in enumerate(stages, start=1):
        if not isinstance(stage, Mapping):
            raise _invalid(f"stage {n} must be an object with 'mode' and 'steps'")
        mode = _MODE_ALIASES.get(str(stage.get("mode") or "sequence").strip().lower())
        if mode is None:
            raise _invalid(f"stage {n} has mode {str(stage.get('mode'))[:40]!r}; a stage is 'parallel' or 'sequence'")
        steps = stage.get("steps")
        if not isinstance(steps, list) or not steps:
            raise _invalid(f"stage {n} needs 'steps': a non-empty list")
        count += len(steps)
        if count > MAX_STEPS:
            raise _invalid(f"the plan has more than {MAX_STEPS} steps",
                           hint="plan the first steps now and the rest after their results")
        parsed = [_read_step(step, f"{n}.{i}", rescues) for i, step in enumerate(steps, start=1)]
        for step in parsed:
            if step.id in seen:
                raise _invalid(f"two steps are called {step.id!r}; each step needs its own id")
            seen[step.id] = n
        read.append(PlanStage(mode=mode, steps=parsed))  # type: ignore[arg-type]
    plan = StagedPlan(goal=_goal(raw.get("goal")), stages=read)
    _check_inputs(plan, seen)
    return plan, rescues


def _read_step(raw: Any, where: str, rescues: list[str]) -> PlanStep:
    """One step, its arguments normalised and checked as the same call made alone."""
    if not isinstance(raw, Mapping):
        raise _invalid(f"step {where} must be an object with 'id', 'tool' and 'arguments'")
    step_id = str(raw.get("id") or f"s{where.replace('.', '_')}").strip()
    if not _STEP_ID.fullmatch(step_id):
        raise _invalid(f"step id {step_id[:40]!r} is not a short name (letters, digits, _ and -, a letter first)")
    name = str(raw.get("tool") or "").strip()
    tool = _TOOL_ALIASES.get(name, name)
    if tool not in STEP_TOOLS:
        raise InvalidArguments(
            f"step {step_id!r} calls {name[:40]!r}, which a plan cannot run" if name else f"step {step_id!r} names no tool",
            reason="unknown_tool", hint="a plan's steps are run_sql or run_python calls; call other tools on their own",
        )
    if "arguments" in raw:
        given: Any = raw["arguments"]
    else:  # the arguments beside the step's own keys
        given = {k: v for k, v in raw.items() if k not in ("id", "tool", "inputs")}
        rescues.append("plan:flat_arguments")
    try:
        arguments, more = normalize_arguments_verbose(tool, given)
    except InvalidArguments as exc:
        raise InvalidArguments(f"step {step_id!r}: {exc.message}", reason=exc.reason, hint=exc.hint) from exc
    rescues += more
    spec = spec_of(tool)
    payload = spec.payload if spec is not None else None
    if payload and not str(arguments.get(payload) or "").strip():
        raise InvalidArguments(f"step {step_id!r} ({tool}) has an empty '{payload}'", reason="empty_payload",
                               hint=f"give every step its full '{payload}'")
    try:
        if spec is not None and spec.check is not None:
            spec.check(arguments)
    except InvalidArguments as exc:
        raise InvalidArguments(f"step {step_id!r}: {exc.message}", reason=exc.reason, hint=exc.hint) from exc
    inputs = raw.get("inputs") or []
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs) or len(inputs) > MAX_STEPS:
        raise _invalid(f"step {step_id!r}: 'inputs' must be a list of step ids")
    return PlanStep(id=step_id, tool=tool, arguments=arguments, inputs=list(dict.fromkeys(i.strip() for i in inputs)))  # type: ignore[arg-type]


def _check_inputs(plan: StagedPlan, stage_of: dict[str, int]) -> None:
    """Every input defined, no cycle, each input finished before its step starts."""
    steps = {s.id: s for s in plan.steps()}
    for step in steps.values():
        missing = [i for i in step.inputs if i not in steps]
        if missing:
            raise InvalidArguments(
                f"step {step.id!r} needs {', '.join(repr(m) for m in missing)}, which the plan does not define",
                reason="plan_undefined_input", hint=f"inputs name steps of the plan: {', '.join(steps)}",
            )
    cycle = _cycle(steps)
    if cycle:
        raise InvalidArguments(f"the plan's inputs make a cycle: {' -> '.join(cycle)}", reason="plan_cycle",
                               hint="a step can only need steps that finish before it starts")
    position = {s.id: n for n, s in enumerate(plan.steps())}
    for stage in plan.stages:
        for step in stage.steps:
            for needed in step.inputs:
                same_parallel = stage.mode == "parallel" and stage_of[needed] == stage_of[step.id]
                if same_parallel or position[needed] > position[step.id]:
                    raise InvalidArguments(
                        f"step {step.id!r} needs {needed!r}, which does not finish before it starts"
                        + (" (they are in the same parallel stage)" if same_parallel else ""),
                        reason="plan_order", hint=f"move {step.id!r} to a stage after the one of {needed!r}",
                    )
        if stage.mode == "parallel":
            names = [s.arguments[s.kind.dataset_argument] for s in stage.steps if s.kind.is_query]
            clash = sorted({n for n in names if names.count(n) > 1})
            if clash:
                raise _invalid(f"queries of one parallel stage all bind {clash[0]!r}; give each its own name")


def _cycle(steps: Mapping[str, PlanStep]) -> list[str]:
    """A cycle of the inputs as ``[a, b, ..., a]``, or ``[]`` when there is none."""
    colour: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        colour[node] = 1
        path.append(node)
        for needed in steps[node].inputs:
            if colour.get(needed) == 1:
                return path[path.index(needed):] + [needed]
            if needed not in colour and (found := visit(needed)):
                return found
        path.pop()
        colour[node] = 2
        return []

    for node in steps:
        if node not in colour and (found := visit(node)):
            return found
    return []


def _staged_by_inputs(steps: list[Any]) -> list[dict[str, Any]]:
    """Steps sent without stages, grouped into parallel stages by how deep their inputs go.

    >>> [[s["id"] for s in stage["steps"]] for stage in _staged_by_inputs([
    ...     {"id": "a"}, {"id": "b"}, {"id": "c", "inputs": ["a", "b"]}])]
    [['a', 'b'], ['c']]
    """
    by_id = {str(s.get("id")): s for s in steps if isinstance(s, Mapping)}
    depth: dict[str, int] = {}

    def level(step_id: str, seen: frozenset[str]) -> int:
        if step_id in depth:
            return depth[step_id]
        if step_id in seen or step_id not in by_id:  # a cycle or an unknown input: refused later
            return 0
        inputs = by_id[step_id].get("inputs") or []
        inputs = [inputs] if isinstance(inputs, str) else inputs if isinstance(inputs, list) else []
        depth[step_id] = 1 + max((level(str(i), seen | {step_id}) for i in inputs), default=-1)
        return depth[step_id]

    stages: dict[int, list[Any]] = {}
    for step in steps:
        key = level(str(step.get("id")), frozenset()) if isinstance(step, Mapping) else 0
        stages.setdefault(key, []).append(step)
    return [{"mode": "parallel", "steps": stages[k]} for k in sorted(stages)]


def _goal(value: Any) -> str:
    text = value.strip() if isinstance(value, str) else ""
    return text if len(text) <= 500 else text[:497] + "..."


def _invalid(message: str, *, hint: str = _HINT) -> InvalidArguments:
    return InvalidArguments(message, reason="invalid_plan", hint=hint)
