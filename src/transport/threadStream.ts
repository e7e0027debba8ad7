/**
 * One thread kept up to date from the server: its history, then the live events of a
 * running turn, applied exactly once and in order (src/model/delivery.ts), across
 * dropped connections.
 *
 * - Opening a thread loads its history (`GET events`); when a turn runs on it (the
 *   thread's `active`, e.g. after a page reload), its stream is followed from the last
 *   event applied.
 * - Asking starts a turn (`POST turns`) and reads its stream.
 * - A stream that ends before its turn's end (network loss, a server restart, a proxy's
 *   timeout) is opened again from the last event applied (`?after=lastSeq`), after a
 *   backoff that grows with each failed attempt and resets once events flow again.
 * - A gap left by events arriving out of order, or by a merged text delta that only
 *   partly overlapped what was applied, is filled from the history, which never merges.
 * - Stop is possible from the moment the turn is asked: a cancel that reaches the
 *   server before the turn starts there is repeated once the turn's stream opens.
 *
 * No React and no browser API here: the transport is given, so the specs drive it with
 * frames of their own.
 */

import {
  activeTurn,
  initialThreadModel,
  missing,
  openStream,
  parseEvent,
  receiveAll,
  receiveFrames,
  type AnalystEvent,
  type SseFrame,
  type StreamError,
  type ThreadModel
} from '../model';

/** What the stream needs of the server (AnalystClient, adapted in threadTransport.ts). */
export interface IThreadTransport {
  /** `GET threads/{id}/events?after=N`: the events after `after`, as JSON. */
  history(after: number): Promise<unknown[]>;
  /** Whether a turn runs on the thread now (`GET threads/{id}` `active`). */
  active(): Promise<boolean>;
  /**
   * `GET events` as a stream after `after`: the backlog, then live events while a turn
   * runs. `onOpen` is called when the server has answered (an idle turn may send no
   * event for a long while, only heartbeats).
   */
  follow(after: number, signal: AbortSignal, onOpen: () => void): AsyncIterable<SseFrame>;
  /** `POST turns`: start a turn and stream its events (a refusal throws before `onOpen`). */
  start(prompt: string, signal: AbortSignal, onOpen: () => void): AsyncIterable<SseFrame>;
  /** `POST cancel`: whether a turn was running and is now stopping. */
  cancel(): Promise<boolean>;
}

/** How the stream stands with the server. */
export type Connection =
  /** Nothing to follow: no turn runs (or the history is loading). */
  | 'idle'
  /** The turn was asked; no answer from the server yet. */
  | 'sending'
  /** A turn's events are arriving. */
  | 'live'
  /** The stream dropped in the middle of a turn: opening it again. */
  | 'reconnecting';

/** What the conversation renders. */
export interface IThreadSnapshot {
  model: ThreadModel;
  connection: Connection;
  /** A turn is in flight (asked, or running): Stop is offered. */
  running: boolean;
  /** Stop was asked and the turn has not ended yet. */
  stopping: boolean;
  /** Reconnection attempts since events last flowed. */
  attempts: number;
  /** The last failure, until the next action (an `AnalystApiError` from the client). */
  error: unknown;
  /** A stream's own `event: error` frame (its turn failed on the server). */
  streamError: StreamError | null;
}

/** Options: how long to wait before the n-th reconnection, and how to wait. */
export interface IThreadStreamOptions {
  /** Milliseconds before reconnection attempt `attempt` (1, 2, ...). */
  backoff?: (attempt: number) => number;
  /** Resolves after `ms` or when `signal` aborts (a test passes one that does not wait). */
  wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Whether an error is final (a refusal) rather than a lost connection worth retrying. */
  isFinal?: (error: unknown) => boolean;
  /**
   * After a turn's end, when to read its events again for the summarizer's note (its
   * `memory` event, with the call's cost for the footer), which comes after the end: ms
   * after the end, in order, until it has come (`SUMMARY_WAITS_MS`; [] never).
   */
  summaryWaits?: readonly number[];
}

/** When a turn's summarizer note is looked for after its end (ms): its call takes a second or more. */
export const SUMMARY_WAITS_MS: readonly number[] = [500, 2_000, 8_000, 30_000];

/** The turn's ends after which the summarizer runs (jupyter_analyst/turns/run.py). */
const SUMMARIZED: readonly string[] = ['completed', 'needs_input', 'step_limited', 'no_answer'];

/** 0.5 s, 1 s, 2 s, ... up to 10 s. */
export function defaultBackoff(attempt: number): number {
  return Math.min(10_000, 500 * 2 ** Math.max(0, attempt - 1));
}

function defaultWait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** An HTTP refusal (4xx) is final; a lost connection or a server error (5xx, 0) is retried. */
function defaultIsFinal(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500;
}

function isAbort(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'AbortError';
}

/** The events of a history page the guard accepts (the rest are passed over). */
function readable(raw: readonly unknown[]): AnalystEvent[] {
  return raw.map(parseEvent).filter((e): e is AnalystEvent => e !== null);
}

/** A thread's events from the server, as one changing snapshot. */
export class ThreadStream {
  private _snapshot: IThreadSnapshot = {
    model: initialThreadModel(),
    connection: 'idle',
    running: false,
    stopping: false,
    attempts: 0,
    error: null,
    streamError: null
  };
  private readonly _listeners = new Set<(snapshot: IThreadSnapshot) => void>();
  private readonly _abort = new AbortController();
  private readonly _backoff: (attempt: number) => number;
  private readonly _wait: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly _summaryWaits: readonly number[];
  private readonly _isFinal: (error: unknown) => boolean;
  /** Stop was asked before the server had the turn: cancel again when its stream opens. */
  private _cancelPending = false;
  /** The loop that follows the running turn, while one runs. */
  private _following: Promise<void> | null = null;

  constructor(
    private readonly _transport: IThreadTransport,
    options: IThreadStreamOptions = {}
  ) {
    this._backoff = options.backoff ?? defaultBackoff;
    this._wait = options.wait ?? defaultWait;
    this._summaryWaits = options.summaryWaits ?? SUMMARY_WAITS_MS;
    this._isFinal = options.isFinal ?? defaultIsFinal;
  }

  get snapshot(): IThreadSnapshot {
    return this._snapshot;
  }

  /** Called with each new snapshot; returns the unsubscription. */
  subscribe(listener: (snapshot: IThreadSnapshot) => void): () => void {
    this._listeners.add(listener);
    return () => this._listeners.delete(listener);
  }

  /** Ends every stream of the thread (the view left it). */
  dispose(): void {
    this._abort.abort();
    this._listeners.clear();
  }

  get disposed(): boolean {
    return this._abort.signal.aborted;
  }

  /** Load the history, and follow the turn that runs on the thread, if one does. */
  async open(): Promise<void> {
    try {
      await this._catchUp(0);
      if (this.disposed) {
        return;
      }
      if (await this._transport.active()) {
        await this._followRunning(this._lastSeq());
      }
    } catch (error) {
      this._fail(error);
    }
  }

  /**
   * Ask: start a turn and read its stream; when the stream drops before the turn's end,
   * follow the turn from the last event applied. A busy thread (409) is reported and
   * its running turn followed.
   */
  async ask(prompt: string, onAccepted?: () => void): Promise<void> {
    if (this._snapshot.running) {
      return;
    }
    this._set({
      running: true,
      connection: 'sending',
      error: null,
      streamError: null,
      stopping: false
    });
    const signal = this._abort.signal;
    const before = this._lastSeq();
    try {
      await this._read(onOpen =>
        this._transport.start(prompt, signal, () => {
          // The server took the turn: the question is now the thread's, not the box's.
          onAccepted?.();
          onOpen();
        })
      );
    } catch (error) {
      if (isAbort(error) || this.disposed) {
        return;
      }
      if (this._isFinal(error)) {
        // Refused before the turn started (no model, a busy thread, a bad prompt).
        this._cancelPending = false;
        this._set({ running: false, connection: 'idle', stopping: false, error });
        if ((error as { status?: unknown }).status === 409) {
          await this._followRunning(before);
        }
        return;
      }
      // The connection dropped: the turn may run on; follow it.
    }
    await this._followRunning(before);
  }

  /** Stop the turn in flight (also before the server has answered the ask). */
  async stop(): Promise<void> {
    if (!this._snapshot.running) {
      return;
    }
    this._set({ stopping: true });
    this._cancelPending = true;
    try {
      if (await this._transport.cancel()) {
        this._cancelPending = false;
      }
    } catch (error) {
      this._set({ error });
    }
  }

  clearError(): void {
    this._set({ error: null, streamError: null });
  }

  /**
   * Follow the thread's running turn until its end (once: a second call joins the
   * first). `before`: the last event applied before the turn began, so the end of an
   * earlier turn is not taken for this one's.
   */
  private _followRunning(before: number): Promise<void> {
    if (this._following === null) {
      this._following = this._followLoop(before).finally(() => {
        this._following = null;
      });
    }
    return this._following;
  }

  private async _followLoop(before: number): Promise<void> {
    const signal = this._abort.signal;
    this._set({ running: true });
    let attempts = 0;
    while (!signal.aborted) {
      if (this._turnEnded(before)) {
        break;
      }
      if (attempts > 0) {
        this._set({ connection: 'reconnecting', attempts });
        await this._wait(this._backoff(attempts), signal);
        if (signal.aborted) {
          return;
        }
      }
      try {
        const flowed = await this._read(onOpen =>
          this._transport.follow(this._lastSeq(), signal, onOpen)
        );
        if (this._turnEnded(before)) {
          break;
        }
        // The stream ended without the turn's end: does the turn still run?
        if (!(await this._transport.active())) {
          await this._catchUp(this._lastSeq());
          break;
        }
        attempts = flowed ? 1 : attempts + 1;
      } catch (error) {
        if (isAbort(error) || signal.aborted) {
          return;
        }
        if (this._isFinal(error)) {
          this._fail(error);
          break;
        }
        attempts += 1;
      }
    }
    if (!signal.aborted) {
      this._cancelPending = false;
      this._set({ running: false, connection: 'idle', stopping: false, attempts: 0 });
      void this._awaitSummary();
    }
  }

  /**
   * The ended turn's summarizer note, read when it comes: the stream ends with the turn, and
   * the note (what the summarizer's call cost, for the footer) follows it. Looked for a few
   * times (`summaryWaits`), until it is there, another turn runs, or the thread is closed.
   */
  private async _awaitSummary(): Promise<void> {
    const signal = this._abort.signal;
    const turns = this._snapshot.model.view.turns;
    const ended = turns[turns.length - 1];
    if (ended?.end === null || ended === undefined || !SUMMARIZED.includes(ended.end.status)) {
      return;
    }
    for (const ms of this._summaryWaits) {
      if (ended.memory.length > 0) {
        return;
      }
      await defaultWait(ms, signal);
      if (signal.aborted || this.disposed || this._snapshot.running) {
        return; // closed, or a new turn's stream brings it
      }
      try {
        await this._catchUp(this._lastSeq());
      } catch {
        return; // the server is away: the next turn or a reload shows it
      }
      const now = this._snapshot.model.view.turns.find(t => t.turnId === ended.turnId);
      if (now === undefined || now.memory.length > 0) {
        return;
      }
    }
  }

  /** Read one stream to its end; whether any event arrived on it. */
  private async _read(open: (onOpen: () => void) => AsyncIterable<SseFrame>): Promise<boolean> {
    let progress = openStream(this._snapshot.model, this._lastSeq());
    let flowed = false;
    const onOpen = (): void => {
      // The server answered: the turn exists there, and the connection is back.
      this._set({ connection: 'live', attempts: 0 });
      if (this._cancelPending) {
        void this._repeatCancel();
      }
    };
    for await (const frame of open(onOpen)) {
      if (this.disposed) {
        return flowed;
      }
      flowed = true;
      // The model may have moved on since the stream opened (a gap filled from the history).
      progress = receiveFrames({ ...progress, model: this._snapshot.model }, [frame]);
      this._set({
        model: progress.model,
        streamError: progress.error ?? this._snapshot.streamError
      });
      if (missing(progress.model.delivery) !== null) {
        await this._fillGap();
      }
    }
    return flowed;
  }

  /** Events the stream skipped, from the history. */
  private async _fillGap(): Promise<void> {
    const gap = missing(this._snapshot.model.delivery);
    if (gap !== null) {
      await this._catchUp(gap.after);
    }
  }

  /** The history after `after`, applied. */
  private async _catchUp(after: number): Promise<void> {
    const events = readable(await this._transport.history(after));
    if (!this.disposed) {
      this._set({ model: receiveAll(this._snapshot.model, events, after) });
    }
  }

  private async _repeatCancel(): Promise<void> {
    try {
      if (await this._transport.cancel()) {
        this._cancelPending = false;
      }
    } catch (error) {
      this._set({ error });
    }
  }

  private _lastSeq(): number {
    return this._snapshot.model.delivery.lastSeq;
  }

  /** The thread's last turn began after `before` and has its end. */
  private _turnEnded(before: number): boolean {
    const view = this._snapshot.model.view;
    const last = view.turns[view.turns.length - 1];
    return (
      last !== undefined && activeTurn(view) === null && last.end !== null && last.end.seq > before
    );
  }

  private _fail(error: unknown): void {
    if (isAbort(error) || this.disposed) {
      return;
    }
    this._set({ error });
  }

  private _set(change: Partial<IThreadSnapshot>): void {
    if (this.disposed) {
      return;
    }
    this._snapshot = { ...this._snapshot, ...change };
    for (const listener of this._listeners) {
      listener(this._snapshot);
    }
  }
}
