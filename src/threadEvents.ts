/**
 * The events of the selected thread, kept up to date: its history from `GET events`,
 * then the live stream of a running turn (one the panel started, or one already running
 * when the thread was opened). A placeholder for the view model's reducer: it keeps the
 * raw events in sequence order, each once.
 */

import { useCallback, useEffect, useRef, useState } from 'react';

import {
  AnalystApiError,
  AnalystClient,
  INewTurn,
  IRawEvent,
  ISseFrame,
  eventOf,
  streamErrorOf
} from './api';

/** `events` with `incoming` added: each sequence number once, in order. */
export function mergeEvents(
  events: readonly IRawEvent[],
  incoming: readonly IRawEvent[]
): IRawEvent[] {
  const bySeq = new Map<number, IRawEvent>();
  for (const event of [...events, ...incoming]) {
    bySeq.set(event.seq, event);
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** What a conversation view needs of its thread. */
export interface IThreadEvents {
  events: IRawEvent[];
  /** A turn runs (the panel's own, or one found running when the thread opened). */
  running: boolean;
  /** The last refusal or failure, until the next action. */
  error: AnalystApiError | null;
  /** Ask: start a turn and stream its events. */
  submit: (turn: INewTurn) => Promise<void>;
  clearError: () => void;
}

function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

export function useThreadEvents(
  client: AnalystClient,
  threadId: string
): IThreadEvents {
  const [events, setEvents] = useState<IRawEvent[]>([]);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<AnalystApiError | null>(null);
  // Streams of this thread end when the view leaves it.
  const abort = useRef<AbortController>(new AbortController());

  const consume = useCallback(
    async (frames: AsyncIterable<ISseFrame>): Promise<void> => {
      for await (const frame of frames) {
        const failure = streamErrorOf(frame);
        if (failure) {
          setError(failure);
          continue;
        }
        const event = eventOf(frame);
        if (event) {
          setEvents(current => mergeEvents(current, [event]));
        }
      }
    },
    []
  );

  const fail = useCallback((reason: unknown) => {
    if (isAbort(reason)) {
      return;
    }
    setError(
      reason instanceof AnalystApiError
        ? reason
        : new AnalystApiError(0, {
            message: String(reason),
            reason: null,
            hint: null
          })
    );
  }, []);

  useEffect(() => {
    const controller = new AbortController();
    abort.current = controller;
    setEvents([]);
    setError(null);
    setRunning(false);
    const load = async (): Promise<void> => {
      const history = await client.events(threadId);
      if (controller.signal.aborted) {
        return;
      }
      setEvents(history);
      const detail = await client.thread(threadId);
      if (controller.signal.aborted || !detail.active) {
        return;
      }
      // A turn runs: follow it from the last event we have.
      const after = history.length ? history[history.length - 1].seq : 0;
      setRunning(true);
      try {
        await consume(
          client.followEvents(threadId, after, { signal: controller.signal })
        );
      } finally {
        if (!controller.signal.aborted) {
          setRunning(false);
        }
      }
    };
    load().catch(fail);
    return () => controller.abort();
  }, [client, threadId, consume, fail]);

  const submit = useCallback(
    async (turn: INewTurn): Promise<void> => {
      const { signal } = abort.current;
      setError(null);
      setRunning(true);
      try {
        await consume(client.startTurn(threadId, turn, { signal }));
      } catch (reason) {
        fail(reason);
      } finally {
        if (!signal.aborted) {
          setRunning(false);
        }
      }
    },
    [client, threadId, consume, fail]
  );

  const clearError = useCallback(() => setError(null), []);
  return { events, running, error, submit, clearError };
}
