/**
 * What the specs share: the real turn of the scripted demo, and the frames the server
 * would write for events (the format of jupyter_analyst/server/sse.py `format_event`).
 */

import demoTurnJson from './fixtures/demo-turn.json';
import { parseEvent, type AnalystEvent, type TextDelta } from '../model/events';

/** The 28 events of one real turn (revenue by region per month), as the store holds them. */
export function demoTurn(): AnalystEvent[] {
  return (demoTurnJson as unknown[]).map(raw => {
    const event = parseEvent(raw);
    if (event === null) {
      throw new Error(`the fixture holds an event the guard refuses: ${JSON.stringify(raw)}`);
    }
    return event;
  });
}

/** One event-stream frame, as the server writes it. */
export function frameOf(event: AnalystEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** Text deltas in a row merged as the server's stream merges them for a slow client. */
export function merged(deltas: TextDelta[]): TextDelta {
  const last = deltas[deltas.length - 1];
  return { ...last, text: deltas.map(d => d.text).join('') };
}

/** A deterministic shuffle (a small linear congruential generator), so failures repeat. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const out = items.slice();
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Freezes a value and everything in it, so a mutation throws (modules run in strict mode). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as object)) {
      deepFreeze(inner);
    }
  }
  return value;
}

/** Events of thread ``thr_1``'s turn ``turn_1`` from their bodies, numbered in order (a body
 * the parser would not read fails the spec). */
export function eventsOf(bodies: Record<string, unknown>[]): AnalystEvent[] {
  return bodies.map((body, i) => {
    const event = parseEvent({
      seq: i + 1,
      thread_id: 'thr_1',
      turn_id: 'turn_1',
      ts: '',
      ...body
    });
    if (event === null) {
      throw new Error(`not an event: ${JSON.stringify(body)}`);
    }
    return event;
  });
}
