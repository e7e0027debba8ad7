/**
 * What a card calls things for the person reading it: a step by its number in the turn
 * (never its call id), a figure by its number and step (never `call_…-figure-1.png`), an
 * error by its last line (the traceback on demand), a turn by one line of what ran. The
 * ids stay on the cards, behind their details. Pure: the cards render what these say.
 */

import {
  saidByHeading,
  toolModel,
  type GuardNotice,
  type ToolCard,
  type ToolError,
  type TurnView
} from '../../model';

/** The number of each step of a turn (its tool calls, in the order they came), from 1. */
export function stepNumbers(turn: TurnView): ReadonlyMap<string, number> {
  const numbers = new Map<string, number>();
  for (const item of turn.items) {
    if (item.kind === 'tool' && !numbers.has(item.callId)) {
      numbers.set(item.callId, numbers.size + 1);
    }
  }
  return numbers;
}

/** Where a step of a thread is: its question (turn, from 1, and its prompt) and its number there. */
export interface IStepPlace {
  turn: number;
  step: number;
  prompt: string;
}

/**
 * Where each step of a thread's turns is, by call id: what the artifacts view names a step
 * by (the cards of one turn need only its numbers, stepNumbers).
 */
export function stepPlaces(turns: readonly TurnView[]): ReadonlyMap<string, IStepPlace> {
  const places = new Map<string, IStepPlace>();
  turns.forEach((turn, i) => {
    for (const [callId, step] of stepNumbers(turn)) {
      places.set(callId, { turn: i + 1, step, prompt: turn.prompt });
    }
  });
  return places;
}

/** A call id as the server writes it (a plan's step: the plan's id, a dot, the step's). */
const CALL_ID = /\bcall_[A-Za-z0-9]+(?:\.[A-Za-z0-9_-]+)?/g;

/**
 * A server's text with each call id said as its step ("step 2"); an id of no step of the
 * turn as "an earlier step".
 */
export function withStepNames(text: string, numbers: ReadonlyMap<string, number>): string {
  return text.replace(CALL_ID, id => {
    const n = numbers.get(id);
    return n === undefined ? 'an earlier step' : `step ${n}`;
  });
}

const FIGURE = /^(call_[A-Za-z0-9]+(?:\.[A-Za-z0-9_-]+)?)-figure-(\d+)(\.[A-Za-z0-9]+)?$/;

/**
 * An artifact's name as people read it: a figure the kernel named after its call
 * (`call_ae884fb10778-figure-1.png`) is "Figure 1 of step 3"; any other name is its own.
 */
export function artifactTitle(name: string, numbers: ReadonlyMap<string, number>): string {
  const figure = FIGURE.exec(name.split('/').pop() ?? name);
  if (figure === null) {
    return name;
  }
  const step = numbers.get(figure[1]);
  return `Figure ${figure[2]}` + (step === undefined ? '' : ` of step ${step}`);
}

/** What a step is for, in a few words (its tool's `purpose`: a dataset's name, a code's first comment). */
export function stepPurpose(card: ToolCard): string | null {
  return toolModel(card.tool)?.purpose?.(card.arguments) ?? null;
}

/**
 * One line on what a turn's steps did, from the server's counters (what the CLI prints as
 * "0 executed, 2 reused"): "2 steps reused", "1 step run, 2 reused", "3 steps run, 1 refused".
 * Null when no step ran.
 */
export function turnSummary(counters: Readonly<Record<string, number>>): string | null {
  const parts = (
    [
      [counters.executed ?? 0, 'run'],
      [counters.reused ?? 0, 'reused'],
      [counters.blocked ?? 0, 'refused']
    ] as [number, string][]
  ).filter(([n]) => n > 0);
  if (parts.length === 0) {
    return null;
  }
  return parts
    .map(([n, verb], i) => (i === 0 ? `${n} step${n === 1 ? '' : 's'} ${verb}` : `${n} ${verb}`))
    .join(', ');
}

/** An exception's line of a Python traceback: `KeyError: 'x'`, `ZeroDivisionError: ...`. */
const EXCEPTION_LINE = /^[A-Za-z_][\w.]*(Error|Exception|Warning|Exit|Interrupt|Iteration)\b/;

/**
 * An error's message as a card shows it: the line that says what went wrong (a traceback's
 * exception and the hints after it), and the whole text when there is more (null if not).
 */
export function errorLines(message: string): { last: string; full: string | null } {
  const lines = message.split('\n').filter(l => l.trim() !== '');
  if (lines.length <= 2) {
    return { last: message.trim(), full: null };
  }
  let at = -1;
  lines.forEach((line, i) => {
    if (EXCEPTION_LINE.test(line)) {
      at = i;
    }
  });
  const tail = at >= 0 ? lines.slice(at) : lines.slice(-1);
  const last = (tail.length <= 3 ? tail : tail.slice(0, 1)).join('\n');
  return { last, full: message };
}

/**
 * The guards a card shows: not one that says again what its error says (a refusal's guard
 * carries the error's own message; a refusal whose heading says it all is said by that
 * heading), nor the skip of a reused step (the card says "reused").
 */
export function shownGuards(card: ToolCard, error: ToolError | undefined): GuardNotice[] {
  if (saidByHeading(error?.reason)) {
    return [];
  }
  return card.guards.filter(g => {
    if (card.reused && g.reason === 'duplicate_tool_call_skipped') {
      return false;
    }
    const a = g.message.trim();
    const b = error?.message.trim() ?? '';
    if (a !== '' && b !== '') {
      return !(a === b || b.includes(a) || a.includes(b));
    }
    return true;
  });
}
