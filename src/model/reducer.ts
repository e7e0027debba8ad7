/**
 * The view of a thread, built from its events alone: `reduce(view, event)` is pure and
 * never changes its input, so the panel can keep every view it rendered and re-render
 * only what changed.
 *
 * Events are applied in sequence order (delivery.ts puts them in order); an event at
 * or below the view's `lastSeq` was applied already and changes nothing, so a replay
 * is harmless.
 *
 * Within a turn the items are in the order the events came: streamed text (the pieces
 * of one stretch of text joined into one block), a card per tool call, artifacts not
 * made by a call, guard notices not about a call, and the final answer. What concerns
 * a call (its guards, the artifacts it recorded, its result) goes on its card.
 *
 * While the model thinks the turn says so (`thinking`), until the next sign that the
 * thought is over (see `endsThought`).
 */

import type {
  AnalystEvent,
  AnswerReady,
  CallTokens,
  CountedBy,
  ArtifactRecorded,
  ContextUsage,
  Guarded,
  MemoryUpdated,
  ModelThinking,
  PlanMade,
  PlanStepChanged,
  StateChanged,
  StepOutput,
  StepProgress,
  TextDelta,
  ToolCallStarted,
  ToolResult,
  TurnEnded,
  TurnStarted
} from './events';
import { reasonText } from './reasons';
import { readResult } from './results';
import { toolModel } from './tools';
import type {
  AnswerItem,
  ArtifactView,
  ContextUsageView,
  GuardNotice,
  MemoryNotice,
  PlanView,
  StateStep,
  TextItem,
  ThreadView,
  ToolCard,
  TurnView
} from './view';
import { LIVE_LINES } from './view';

function newTurn(turnId: string): TurnView {
  return {
    turnId,
    prompt: '',
    model: '',
    rerun: false,
    startedAt: null,
    status: 'running',
    state: null,
    states: [],
    items: [],
    thinking: null,
    starting: null,
    context: [],
    counters: {},
    end: null,
    memory: []
  };
}

function newCard(callId: string, seq: number): ToolCard {
  return {
    kind: 'tool',
    callId,
    tool: '',
    arguments: {},
    stepKey: null,
    status: 'pending',
    reused: false,
    result: null,
    durationS: null,
    artifactIds: [],
    artifacts: [],
    guards: [],
    live: null,
    percent: null,
    modelCall: null,
    startedAt: null,
    endedAt: null,
    seq
  };
}

/** The turn's model call in progress: the last one whose context usage arrived. */
function currentCall(turn: TurnView): number | null {
  const last = turn.context[turn.context.length - 1];
  return last === undefined ? null : last.call;
}

function shortFingerprint(fingerprint: string): string {
  return fingerprint.replace(/^sha256:/, '').slice(0, 12);
}

/** The view with `turnId`'s turn replaced by `change(turn)` (the turn is made if new). */
function withTurn(
  view: ThreadView,
  turnId: string,
  change: (turn: TurnView) => TurnView
): ThreadView {
  const index = view.turns.findIndex(t => t.turnId === turnId);
  if (index < 0) {
    return { ...view, turns: [...view.turns, change(newTurn(turnId))] };
  }
  const turns = view.turns.slice();
  turns[index] = change(view.turns[index]);
  return { ...view, turns };
}

/** The turn with the card of `callId` replaced by `change(card)` (made where it is first mentioned). */
function withCard(
  turn: TurnView,
  callId: string,
  seq: number,
  change: (card: ToolCard) => ToolCard
): TurnView {
  const index = turn.items.findIndex(i => i.kind === 'tool' && i.callId === callId);
  const items = turn.items.slice();
  if (index < 0) {
    items.push(change({ ...newCard(callId, seq), modelCall: currentCall(turn) }));
  } else {
    items[index] = change(items[index] as ToolCard);
  }
  return { ...turn, items };
}

/** The card of the call running now: the last card without a result. */
function openCard(turn: TurnView): ToolCard | null {
  for (let i = turn.items.length - 1; i >= 0; i--) {
    const item = turn.items[i];
    if (item.kind === 'tool') {
      return item.status === 'pending' && item.startedAt !== null ? item : null;
    }
  }
  return null;
}

function onTurnStarted(turn: TurnView, e: TurnStarted): TurnView {
  return { ...turn, prompt: e.prompt, model: e.model, rerun: e.rerun, startedAt: e.ts };
}

function onState(turn: TurnView, e: StateChanged): TurnView {
  const step: StateStep = { state: e.to_state, from: e.from_state, at: e.ts, seq: e.seq };
  return { ...turn, state: e.to_state, states: [...turn.states, step] };
}

function onText(turn: TurnView, e: TextDelta): TurnView {
  const last = turn.items[turn.items.length - 1];
  if (last !== undefined && last.kind === 'text') {
    const joined: TextItem = { ...last, text: last.text + e.text, lastSeq: e.seq };
    return { ...turn, items: [...turn.items.slice(0, -1), joined] };
  }
  const block: TextItem = {
    kind: 'text',
    text: e.text,
    modelCall: currentCall(turn),
    firstSeq: e.seq,
    lastSeq: e.seq
  };
  return { ...turn, items: [...turn.items, block] };
}

function onToolCall(turn: TurnView, e: ToolCallStarted): TurnView {
  const args = e.arguments;
  return withCard(turn, e.call_id, e.seq, card => {
    const next: ToolCard = {
      ...card,
      tool: e.tool,
      arguments: args,
      stepKey: e.step_key,
      startedAt: e.ts
    };
    if (typeof args.sql === 'string') {
      next.sql = args.sql;
    }
    if (typeof args.code === 'string') {
      next.code = args.code;
    }
    const bound = toolModel(e.tool)?.binds?.(args);
    if (bound !== undefined) {
      next.datasetName = bound;
    }
    return next;
  });
}

function onToolResult(turn: TurnView, e: ToolResult): TurnView {
  return withCard(turn, e.call_id, e.seq, card => ({
    ...card,
    tool: e.tool,
    status: e.status,
    reused: e.reused,
    result: readResult(e.tool, e.status, e.result),
    durationS: e.duration_s,
    artifactIds: e.artifact_ids,
    endedAt: e.ts
  }));
}

function onStepOutput(turn: TurnView, e: StepOutput): TurnView {
  return withCard(turn, e.call_id, e.seq, card => {
    const before = card.live ?? { text: '', linesCut: 0, omitted: 0, elapsedS: 0 };
    const lines = (before.text + e.text).split('\n');
    // The last line may be unfinished (no newline yet): it counts as one.
    const cut = Math.max(0, lines.length - LIVE_LINES);
    return {
      ...card,
      live: {
        text: lines.slice(cut).join('\n'),
        linesCut: before.linesCut + cut,
        omitted: before.omitted + e.omitted,
        elapsedS: e.elapsed_s
      }
    };
  });
}

function onStepProgress(turn: TurnView, e: StepProgress): TurnView {
  // The server tells only rises; a replayed or reordered one never moves it back.
  return withCard(turn, e.call_id, e.seq, card => ({
    ...card,
    percent: Math.max(card.percent ?? 0, e.percent)
  }));
}

function artifactView(e: ArtifactRecorded): ArtifactView {
  return {
    artifactId: e.artifact_id,
    name: e.name,
    artifactType: e.artifact_type,
    fingerprint: e.fingerprint,
    shortFingerprint: shortFingerprint(e.fingerprint),
    created: e.created,
    at: e.ts,
    seq: e.seq
  };
}

function onArtifact(turn: TurnView, e: ArtifactRecorded): TurnView {
  const artifact = artifactView(e);
  // The server records a step's artifacts between its call and its result, and says which
  // call (several run at once in a plan); an older server did not: the call running now.
  const callId = e.call_id ?? openCard(turn)?.callId ?? null;
  if (callId !== null) {
    return withCard(turn, callId, e.seq, c => ({ ...c, artifacts: [...c.artifacts, artifact] }));
  }
  return { ...turn, items: [...turn.items, { kind: 'artifact', ...artifact }] };
}

function onGuard(turn: TurnView, e: Guarded): TurnView {
  const notice: GuardNotice = {
    reason: e.reason,
    text: reasonText(e.reason),
    message: e.message,
    callId: e.call_id,
    at: e.ts,
    seq: e.seq
  };
  const counted = {
    ...turn,
    counters: { ...turn.counters, [e.reason]: (turn.counters[e.reason] ?? 0) + 1 }
  };
  if (e.call_id !== null) {
    // A refusal comes before the call's card exists (a refused call never starts): the
    // card is made here, and its result fills it in.
    return withCard(counted, e.call_id, e.seq, c => ({ ...c, guards: [...c.guards, notice] }));
  }
  // The answer check sends the model's draft answer back to it: the draft is not an answer
  // of the turn (the one it gives next is), so its streamed text is not shown.
  const last = counted.items[counted.items.length - 1];
  const items =
    e.reason === 'unsupported_claim_flagged' && last?.kind === 'text'
      ? counted.items.slice(0, -1)
      : counted.items;
  return { ...counted, items: [...items, { kind: 'guard', ...notice }] };
}

function onAnswer(turn: TurnView, e: AnswerReady): TurnView {
  const answer: AnswerItem = {
    kind: 'answer',
    text: e.text,
    flagged: e.flagged,
    at: e.ts,
    seq: e.seq
  };
  return { ...turn, items: [...turn.items, answer] };
}

function onTurnEnded(turn: TurnView, e: TurnEnded): TurnView {
  // A call still running when the turn ended (it was stopped, or failed) gets no result.
  const items = turn.items.map(i =>
    i.kind === 'tool' && i.status === 'pending' ? { ...i, status: 'unfinished' as const } : i
  );
  return {
    ...turn,
    items,
    status: e.status,
    counters: { ...e.counters },
    end: {
      status: e.status,
      message: e.message,
      at: e.ts,
      seq: e.seq,
      ledger: e.ledger,
      receipts: { cited: e.citations, unsupported: e.unsupported, definitions: e.definitions },
      suggestions: e.suggestions
    }
  };
}

function onContext(turn: TurnView, e: ContextUsage): TurnView {
  const usage: ContextUsageView = {
    call: e.call,
    tokens: e.tokens,
    budget: e.budget,
    parts: e.parts,
    messages: e.messages,
    turns: e.turns,
    droppedTurns: e.dropped_turns,
    summarizedThrough: e.summarized_through,
    assemblyMs: e.assembly_ms,
    promptTokens: e.prompt_tokens,
    completionTokens: e.completion_tokens,
    at: e.ts
  };
  return { ...turn, context: [...turn.context.filter(c => c.call !== e.call), usage] };
}

function onThinking(turn: TurnView, e: ModelThinking): TurnView {
  if (turn.status !== 'running') {
    return turn; // an ended turn thinks no more
  }
  return { ...turn, thinking: { since: e.ts, modelCall: currentCall(turn), seq: e.seq } };
}

/**
 * Whether `event` says the model is no longer thinking. While a model call streams, the
 * server tells nothing of the turn but its text and that it thinks; every other event of
 * the turn (a call, a guard, the call's usage as the server counted it once the reply is
 * in, the next state, the answer, the end) comes after the thought. The summarizer's
 * memory note is not the model of the turn.
 */
function endsThought(event: AnalystEvent): boolean {
  return event.type !== 'thinking' && event.type !== 'memory';
}

function thoughtOver(turn: TurnView): TurnView {
  return turn.thinking === null ? turn : { ...turn, thinking: null };
}

/** Two sets of calls together, as the ledger adds them: a cost only when both have one. */
export function plusCalls(a: CallTokens, b: CallTokens): CallTokens {
  const empty = (t: CallTokens): boolean =>
    t.counted_by === 'none' && t.prompt_tokens === 0 && t.completion_tokens === 0;
  const kinds = new Set([a.counted_by, b.counted_by].filter(k => k !== 'none'));
  const counted_by: CountedBy =
    kinds.size === 1 ? [...kinds][0] : kinds.size === 0 ? 'none' : 'mixed';
  const cost_usd = empty(a)
    ? b.cost_usd
    : empty(b)
      ? a.cost_usd
      : a.cost_usd === null || b.cost_usd === null
        ? null
        : a.cost_usd + b.cost_usd;
  return {
    calls: a.calls + b.calls,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    counted_by,
    cost_usd
  };
}

function onMemory(turn: TurnView, e: MemoryUpdated): TurnView {
  // The summarizer's call comes after the turn's end: it joins the turn's ledger, kept
  // apart (`summarizer`) so the footer can say which calls answered and which summarized.
  const end = turn.end;
  if (e.usage !== null && end !== null && end.ledger !== null) {
    const summarizer = plusCalls(end.ledger.summarizer, e.usage);
    turn = { ...turn, end: { ...end, ledger: { ...end.ledger, summarizer } } };
  }
  const notice: MemoryNotice = {
    status: e.status,
    version: e.version,
    changes: e.changes,
    summarizedThrough: e.summarized_through,
    message: e.message,
    at: e.ts,
    seq: e.seq
  };
  return { ...turn, memory: [...turn.memory, notice] };
}

function onPlan(turn: TurnView, e: PlanMade): TurnView {
  const plan: PlanView = {
    goal: e.goal,
    stages: e.stages.map(stage => ({
      mode: stage.mode,
      steps: stage.steps.map(step => ({
        id: step.id,
        callId: step.call_id,
        tool: step.tool,
        summary: step.summary,
        inputs: step.inputs,
        status: 'pending' as const,
        reused: false,
        message: null
      }))
    }))
  };
  return withCard(turn, e.call_id, e.seq, card => ({ ...card, plan }));
}

function onPlanStep(turn: TurnView, e: PlanStepChanged): TurnView {
  return withCard(turn, e.call_id, e.seq, card => {
    if (card.plan === undefined) {
      return card;
    }
    const stages = card.plan.stages.map(stage => ({
      ...stage,
      steps: stage.steps.map(step =>
        step.id === e.step_id
          ? { ...step, status: e.status, reused: e.reused, message: e.message }
          : step
      )
    }));
    return { ...card, plan: { ...card.plan, stages } };
  });
}

/**
 * The view after one more event. Pure: `view` is not changed, and an event already
 * applied (`seq <= view.lastSeq`) returns `view` itself.
 */
export function reduce(view: ThreadView, event: AnalystEvent): ThreadView {
  if (event.seq <= view.lastSeq) {
    return view;
  }
  const next = apply({ ...view, lastSeq: event.seq }, event);
  const turn = next.turns.find(t => t.turnId === event.turn_id);
  const thought =
    turn !== undefined && turn.thinking !== null && endsThought(event)
      ? withTurn(next, event.turn_id, thoughtOver)
      : next;
  // What was starting has started once the turn tells anything else of its own.
  return turn !== undefined &&
    turn.starting !== null &&
    event.type !== 'starting' &&
    event.type !== 'memory'
    ? withTurn(thought, event.turn_id, t => ({ ...t, starting: null }))
    : thought;
}

/** `event` applied to `applied` (the view with its `lastSeq` already moved on). */
function apply(applied: ThreadView, event: AnalystEvent): ThreadView {
  switch (event.type) {
    case 'turn_started':
      return withTurn(applied, event.turn_id, t => onTurnStarted(t, event));
    case 'state':
      return withTurn(applied, event.turn_id, t => onState(t, event));
    case 'text_delta':
      return withTurn(applied, event.turn_id, t => onText(t, event));
    case 'thinking':
      return withTurn(applied, event.turn_id, t => onThinking(t, event));
    case 'starting':
      return withTurn(applied, event.turn_id, t => ({
        ...t,
        starting: { what: event.what, message: event.message, since: event.ts }
      }));
    case 'tool_call':
      return withTurn(applied, event.turn_id, t => onToolCall(t, event));
    case 'tool_result':
      return withTurn(applied, event.turn_id, t => onToolResult(t, event));
    case 'step_output':
      return withTurn(applied, event.turn_id, t => onStepOutput(t, event));
    case 'step_progress':
      return withTurn(applied, event.turn_id, t => onStepProgress(t, event));
    case 'artifact': {
      const recorded = {
        ...applied,
        artifacts: { ...applied.artifacts, [event.artifact_id]: artifactView(event) }
      };
      return withTurn(recorded, event.turn_id, t => onArtifact(t, event));
    }
    case 'guard':
      return withTurn(applied, event.turn_id, t => onGuard(t, event));
    case 'answer':
      return withTurn(applied, event.turn_id, t => onAnswer(t, event));
    case 'turn_ended':
      return withTurn(applied, event.turn_id, t => onTurnEnded(t, event));
    case 'context_usage':
      return withTurn(applied, event.turn_id, t => onContext(t, event));
    case 'memory':
      return withTurn(applied, event.turn_id, t => onMemory(t, event));
    case 'plan':
      return withTurn(applied, event.turn_id, t => onPlan(t, event));
    case 'plan_step':
      return withTurn(applied, event.turn_id, t => onPlanStep(t, event));
  }
}

/** The view after a run of events, in order. */
export function reduceAll(view: ThreadView, events: readonly AnalystEvent[]): ThreadView {
  return events.reduce(reduce, view);
}
