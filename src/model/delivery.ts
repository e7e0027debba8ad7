/**
 * Delivery: events in whatever order and number they arrive, applied exactly once and
 * in sequence order.
 *
 * The server numbers a thread's events 1, 2, 3, ... with no gap. A client may get them
 * from several places: the history (`GET .../events?after=N`), a turn's stream, a
 * resumed stream (`Last-Event-ID`), so the same event may come twice and a later one
 * may come before an earlier one. Here an event already applied is ignored, an event
 * after a gap is held until the gap is filled, and `missing` says which events to fetch
 * (`?after=gap.after`) when a gap waits.
 *
 * One subtlety comes from the server's stream (server/sse.py): for a slow client it
 * merges text deltas waiting in a row into one frame, which carries the *last* merged
 * sequence number. On one stream, frames are in order and only such merges skip
 * numbers, so a text delta received with `after` (the sequence number of the frame
 * before it on the same stream, or the `after` the stream was opened with) stands for
 * every event in `(after, seq]`. A merged delta that only partly overlaps what is
 * already applied cannot be split: it is dropped and its range reported missing, to be
 * fetched from the history, which never merges.
 */

import { parseEvent, parseStreamError, type AnalystEvent, type StreamError } from './events';
import { reduce } from './reducer';
import type { SseFrame } from './sse';
import { initialThreadView, type ThreadView } from './view';

/** Events `after < seq <= through` are needed before anything held can be applied. */
export interface Gap {
  after: number;
  through: number;
}

/** An event waiting for the ones before it; `event` is null for a frame that could not be read. */
interface Held {
  from: number;
  seq: number;
  event: AnalystEvent | null;
}

/** What has been applied and what waits. Treated as immutable. */
export interface Delivery {
  /** The last sequence number applied: resume with `Last-Event-ID` / `?after=` this. */
  readonly lastSeq: number;
  /** The highest sequence number seen, applied or not. */
  readonly seen: number;
  /** Events waiting for a gap to be filled, by sequence number. */
  readonly held: readonly Held[];
}

/** Nothing applied yet (or everything through `lastSeq` already applied, e.g. from a cache). */
export function initialDelivery(lastSeq = 0): Delivery {
  return { lastSeq, seen: lastSeq, held: [] };
}

/** The gap that keeps held events waiting, or that a dropped merge left; null when none. */
export function missing(delivery: Delivery): Gap | null {
  if (delivery.seen <= delivery.lastSeq) {
    return null;
  }
  const first = delivery.held.reduce((low, h) => Math.min(low, h.from), delivery.seen);
  return { after: delivery.lastSeq, through: first };
}

/** The events now ready, in order, and the delivery after them. */
export interface Delivered {
  delivery: Delivery;
  ready: AnalystEvent[];
}

function rangeStart(seq: number, isText: boolean, after: number | undefined): number {
  // Only a text delta on an ordered stream may stand for more than its own number.
  return isText && after !== undefined && after < seq - 1 ? after : seq - 1;
}

function take(delivery: Delivery, entry: Held): Delivered {
  const seen = Math.max(delivery.seen, entry.seq);
  if (entry.seq <= delivery.lastSeq) {
    return { delivery, ready: [] }; // applied already
  }
  if (entry.from > delivery.lastSeq) {
    const duplicate = delivery.held.some(h => h.seq === entry.seq && h.from === entry.from);
    const held = duplicate
      ? delivery.held
      : [...delivery.held, entry].sort((a, b) => a.seq - b.seq || b.from - a.from);
    return { delivery: { ...delivery, seen, held }, ready: [] };
  }
  if (entry.from < delivery.lastSeq) {
    // A merged text delta of which a part is applied already: it cannot be split.
    return { delivery: { ...delivery, seen }, ready: [] };
  }
  // entry.from === lastSeq: it applies, and then whatever it unblocks.
  const ready: AnalystEvent[] = entry.event === null ? [] : [entry.event];
  let lastSeq = entry.seq;
  let held = delivery.held;
  for (;;) {
    held = held.filter(h => h.from >= lastSeq); // applied already, or a merge that overlaps
    const next = held.find(h => h.from === lastSeq);
    if (next === undefined) {
      break;
    }
    held = held.filter(h => h !== next);
    if (next.event !== null) {
      ready.push(next.event);
    }
    lastSeq = next.seq;
  }
  return { delivery: { lastSeq, seen, held }, ready };
}

/**
 * Take one event. `after`: the sequence number of the frame before it on the same
 * ordered stream (or the `after` the stream was opened with); leave it out for an event
 * of unknown provenance.
 */
export function deliver(delivery: Delivery, event: AnalystEvent, after?: number): Delivered {
  const from = rangeStart(event.seq, event.type === 'text_delta', after);
  return take(delivery, { from, seq: event.seq, event });
}

/**
 * A frame whose id says `seq` but whose data is not an event this client can read (a
 * newer server's event type, say): its number is taken as delivered, so one unreadable
 * frame does not hold up everything after it.
 */
export function skip(delivery: Delivery, seq: number): Delivered {
  return take(delivery, { from: seq - 1, seq, event: null });
}

/** The view and its delivery, together: what a panel keeps per thread. */
export interface ThreadModel {
  view: ThreadView;
  delivery: Delivery;
}

export function initialThreadModel(): ThreadModel {
  return { view: initialThreadView(), delivery: initialDelivery() };
}

/** The model after one event arrives (applied now, held, or ignored as a duplicate). */
export function receive(model: ThreadModel, event: AnalystEvent, after?: number): ThreadModel {
  return settle(model, deliver(model.delivery, event, after));
}

/**
 * The model after the events of one ordered source: a history page (`?after=after`) or
 * the frames of one stream opened after `after`, in the order they came.
 */
export function receiveAll(
  model: ThreadModel,
  events: readonly AnalystEvent[],
  after: number
): ThreadModel {
  let previous = after;
  let out = model;
  for (const event of events) {
    out = receive(out, event, previous);
    previous = event.seq;
  }
  return out;
}

/** The model after an unreadable frame with id `seq` (see `skip`). */
export function receiveUnreadable(model: ThreadModel, seq: number): ThreadModel {
  return settle(model, skip(model.delivery, seq));
}

function settle(model: ThreadModel, { delivery, ready }: Delivered): ThreadModel {
  if (delivery === model.delivery) {
    return model;
  }
  return { view: ready.reduce(reduce, model.view), delivery };
}

/** Where one open event stream is: the model it fed, its last frame's number, its error. */
export interface StreamProgress {
  model: ThreadModel;
  /** The sequence number of the stream's last event frame (or the `after` it was opened with). */
  previous: number;
  /** Why the stream ended without its turn's end (its `event: error` frame), if it did. */
  error: StreamError | null;
}

/** A stream just opened with `?after=after` (or `Last-Event-ID: after`). */
export function openStream(model: ThreadModel, after: number): StreamProgress {
  return { model, previous: after, error: null };
}

/**
 * The stream after more of its frames (from SseParser, in order): events are received
 * with their place on the stream (so merged text deltas count right), a frame that is
 * not a readable event but has a new id is passed over, and the error frame is kept.
 */
export function receiveFrames(
  progress: StreamProgress,
  frames: readonly SseFrame[]
): StreamProgress {
  let { model, previous, error } = progress;
  for (const frame of frames) {
    if (frame.event === 'error') {
      error = parseStreamError(frame.data) ?? { reason: 'stream_error', message: frame.data };
      continue;
    }
    const event = parseEvent(frame.data);
    if (event !== null) {
      model = receive(model, event, previous);
      previous = event.seq;
      continue;
    }
    // An id is kept across frames, so only an id newer than the last one names this frame.
    const seq = Number(frame.id);
    if (frame.id !== '' && Number.isInteger(seq) && seq > previous) {
      model = receiveUnreadable(model, seq);
      previous = seq;
    }
  }
  return { model, previous, error };
}
