/**
 * The view of a thread that the cards render: its turns, each with its states, its items
 * (streamed text, a card per tool call, artifacts, guard notices, the answer), its end and
 * its memory notices; and the queries on it the components and the stream ask. reducer.ts
 * builds it from events; reasons.ts gives its codes their words.
 */

import type {
  Citation,
  PlanStageView,
  PlanStepStatus,
  PlanStepView,
  ReasonCode,
  StartingWhat,
  State,
  ToolCallStarted,
  ToolStatus,
  TurnEndStatus,
  TurnLedger,
  TurnStarted,
  UnsupportedClaim,
  DefinitionCitation,
  MetricSuggestion
} from './events';
import type { ToolResultView } from './results';

/** One state the turn entered, for the state strip. */
export interface StateStep {
  state: State;
  /** The state left (null for the first). */
  from: State | null;
  /** When it was entered. */
  at: string;
  seq: number;
}

/** What a guard did, in its code and in plain words. */
export interface GuardNotice {
  reason: ReasonCode;
  /** The reason in plain words (reasons.ts). */
  text: string;
  /** The server's explanation. */
  message: string;
  callId: string | null;
  at: string;
  seq: number;
}

/** An artifact as the events record it. */
export interface ArtifactView {
  artifactId: string;
  name: string;
  artifactType: string;
  fingerprint: string;
  /** The fingerprint's first 12 hex digits, for a badge. */
  shortFingerprint: string;
  /** False when an equal artifact already existed and was reused ("reused" badge). */
  created: boolean;
  at: string;
  seq: number;
}

/** The size of one model call's prompt (shown on hover over what that call produced). */
export interface ContextUsageView {
  call: number;
  tokens: number;
  budget: number;
  parts: Record<string, number>;
  messages: number;
  turns: number[];
  droppedTurns: number;
  summarizedThrough: number;
  assemblyMs: number;
  /**
   * The prompt's size as the model server counted it, once its reply is in (null before,
   * and when the server reports none): a count, where `tokens` is an estimate.
   */
  promptTokens: number | null;
  /** The reply's size as the model server counted it (null as `promptTokens`). */
  completionTokens: number | null;
  at: string;
}

/** Something the turn needs, starting: what, and what to say meanwhile. */
export interface StartingView {
  what: StartingWhat;
  message: string;
  /** When the server told it (the event's time). */
  since: string;
}

/** The model thinking before it answers: since when (its thoughts are never sent). */
export interface ThinkingView {
  /** When the server saw it begin (the `thinking` event's time). */
  since: string;
  /** The model call that is thinking, when its context usage came first. */
  modelCall: number | null;
  seq: number;
}

export interface TextItem {
  kind: 'text';
  /** The pieces of one stretch of streamed text, joined. */
  text: string;
  /** The model call that wrote it (a key of the turn's `context`), when known. */
  modelCall: number | null;
  /** The first and last event of the block. */
  firstSeq: number;
  lastSeq: number;
}

/** `unfinished`: the turn ended before the call had its result. */
export type CardStatus = 'pending' | ToolStatus | 'unfinished';

/** One step of a staged plan and where it stands. */
export interface PlanStepItem extends Omit<PlanStepView, 'call_id'> {
  /** The call id of the step's own card. */
  callId: string;
  /** `pending` until it starts. */
  status: 'pending' | PlanStepStatus;
  reused: boolean;
  /** Why it did not succeed. */
  message: string | null;
}

/** A staged plan, on the card of its `plan` call. */
export interface PlanView {
  goal: string;
  stages: { mode: PlanStageView['mode']; steps: PlanStepItem[] }[];
}

/** The lines a running step printed so far. */
export interface LiveOutputView {
  /** Its stdout and stderr as they came, the newest {@link LIVE_LINES} lines. */
  text: string;
  /** Lines left out of `text` (the oldest), and characters the server did not send live. */
  linesCut: number;
  omitted: number;
  /** Seconds since the step started, at its latest output. */
  elapsedS: number;
}

/** How many of a running step's last lines the card keeps. */
export const LIVE_LINES = 200;

export interface ToolCard {
  kind: 'tool';
  callId: string;
  /** The tool's name ('' until the call or its result says; a guard may come first). */
  tool: string;
  arguments: ToolCallStarted['arguments'];
  /** The query of a call that has one (its `sql` argument). */
  sql?: string;
  /** The code of a call that has some (its `code` argument). */
  code?: string;
  /** The name a call binds in the kernel (its tool's `binds`: a query's dataset). */
  datasetName?: string;
  stepKey: string | null;
  status: CardStatus;
  /** True when the result is an earlier identical step's ("reused" badge). */
  reused: boolean;
  result: ToolResultView | null;
  /** Seconds the step ran (0 for a reused step), once it has a result. */
  durationS: number | null;
  /** What the result says the step produced or reused. */
  artifactIds: string[];
  /** The artifacts recorded while the call ran. */
  artifacts: ArtifactView[];
  /** The guards that concern this call, in order. */
  guards: GuardNotice[];
  /** For a `plan` call: its stages and steps, as they run. */
  plan?: PlanView;
  /** What a running Python step printed, as it came (kept when the turn is stopped). */
  live: LiveOutputView | null;
  /** How much of a running SQL step's query is done, as its engine estimates it (null: the
   * engine has no estimate, or has not told one yet). */
  percent: number | null;
  modelCall: number | null;
  /** When the call started (null when it was refused before it started). */
  startedAt: string | null;
  endedAt: string | null;
  seq: number;
}

export interface ArtifactItem extends ArtifactView {
  kind: 'artifact';
}

export interface GuardItem extends GuardNotice {
  kind: 'guard';
}

export interface AnswerItem {
  kind: 'answer';
  text: string;
  /** Ids or names the answer cites that do not exist. */
  flagged: string[];
  at: string;
  seq: number;
}

export type TurnItem = TextItem | ToolCard | ArtifactItem | GuardItem | AnswerItem;

/** How a turn ended. */
export interface TurnEnd {
  status: TurnEndStatus;
  message: string | null;
  at: string;
  seq: number;
  /** What the turn cost (null when it was closed without running to its end). */
  ledger: TurnLedger | null;
  /** The final answer's receipts (none for a turn without an answer). */
  receipts: AnswerReceiptsView;
  /** Measures the turn's SQL computed that the team's context folder lacks (a person may save one). */
  suggestions: MetricSuggestion[];
}

/** An answer's receipts as its turn's end gives them (offsets into the answer's text). */
export interface AnswerReceiptsView {
  /** The spans and the step results that show them, or two cited numbers they follow from. */
  cited: Citation[];
  /** The numbers no step result supports. */
  unsupported: UnsupportedClaim[];
  /** The team's definitions (metrics, verified queries) the answer's queries followed. */
  definitions: DefinitionCitation[];
}

/** A change the summarizer made to the thread's memory after a turn. */
export interface MemoryNotice {
  status: 'applied' | 'failed';
  version: number;
  changes: Record<string, number>;
  summarizedThrough: number;
  message: string | null;
  at: string;
  seq: number;
}

/** A turn: what its start said (its `prompt` '' when the view began after the turn started) and all since. */
export interface TurnView extends Pick<TurnStarted, 'prompt' | 'model' | 'rerun'> {
  turnId: string;
  startedAt: string | null;
  /** `running` until the turn's end arrives. */
  status: 'running' | TurnEndStatus;
  /** The state the turn is in (null before the first). */
  state: State | null;
  /** The states entered, in order. */
  states: StateStep[];
  items: TurnItem[];
  /**
   * The model is thinking: its latest activity is a thought, with no text, call or other
   * step of the turn since (null otherwise, and once the turn has ended).
   */
  thinking: ThinkingView | null;
  /**
   * What the turn waits for while it starts (its kernel, the SQL checker, the engine), from
   * the `starting` event until the turn's next event (null otherwise).
   */
  starting: StartingView | null;
  /** Context usage per model call, in call order. */
  context: ContextUsageView[];
  /** Reason-code and step counters: counted from guards while running, the server's at the end. */
  counters: Record<string, number>;
  end: TurnEnd | null;
  memory: MemoryNotice[];
}

export interface ThreadView {
  /** The last sequence number applied (0 before any). */
  lastSeq: number;
  turns: TurnView[];
  /** Every artifact the events recorded, by id (the latest record of each). */
  artifacts: Readonly<Record<string, ArtifactView>>;
}

/** The view before any event. */
export function initialThreadView(): ThreadView {
  return { lastSeq: 0, turns: [], artifacts: {} };
}

/** The turn currently running: the last one, if it has not ended. */
export function activeTurn(view: ThreadView): TurnView | null {
  const last = view.turns[view.turns.length - 1];
  return last !== undefined && last.status === 'running' ? last : null;
}

/** The card of a tool call, wherever it is. */
export function findCard(view: ThreadView, callId: string): ToolCard | null {
  for (const turn of view.turns) {
    for (const item of turn.items) {
      if (item.kind === 'tool' && item.callId === callId) {
        return item;
      }
    }
  }
  return null;
}
