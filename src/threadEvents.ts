/**
 * The selected thread, kept up to date, for React: its view (src/model) built from its
 * history and the live stream of a running turn, with Stop and resume. The work is
 * ThreadStream's (src/threadStream.ts); this file adapts the API client to it and
 * re-renders on each change.
 */

import { useCallback, useEffect, useRef, useState } from 'react';

import { AnalystApiError, AnalystClient, INewTurn, IRawEvent, ISseFrame, readFrames } from './api';
import type { SseFrame, ThreadView } from './model';
import { Connection, IThreadTransport, ThreadStream } from './threadStream';

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

/** The client's frames as the model reads them (an id-less frame keeps the last id). */
async function* asModelFrames(
  frames: AsyncIterable<ISseFrame>
): AsyncGenerator<SseFrame, void, undefined> {
  let lastId = '';
  for await (const frame of frames) {
    lastId = frame.id ?? lastId;
    yield { id: lastId, event: frame.event, data: frame.data };
  }
}

/** The frames of a request's event stream; `onOpen` once the server has answered. */
async function* streamOf(
  answer: Promise<Response>,
  onOpen: () => void
): AsyncGenerator<SseFrame, void, undefined> {
  const response = await answer;
  onOpen();
  yield* asModelFrames(readFrames(response));
}

const EVENT_STREAM = { Accept: 'text/event-stream' };

/**
 * The notebook a turn works beside: the path of the notebook the user has open, asked when
 * the turn starts (its outline goes into the model's context), or null for none.
 */
export type CurrentNotebook = () => string | null;

/** The API client as the thread's transport. */
export function clientTransport(
  client: AnalystClient,
  threadId: string,
  currentNotebook: CurrentNotebook = () => null
): IThreadTransport {
  const path = `threads/${encodeURIComponent(threadId)}`;
  return {
    history: after => client.events(threadId, after),
    active: async () => (await client.thread(threadId)).active,
    follow: (after, signal, onOpen) =>
      streamOf(client.request(`${path}/events`, { headers: EVENT_STREAM, signal }, { after }), onOpen),
    start: (prompt, signal, onOpen) => {
      const notebook = currentNotebook();
      const turn: INewTurn = notebook ? { prompt, notebook } : { prompt };
      const body = JSON.stringify(turn);
      return streamOf(client.request(`${path}/turns`, { method: 'POST', body, headers: EVENT_STREAM, signal }), onOpen);
    },
    cancel: () => client.cancel(threadId)
  };
}

/** A failure as the banner shows it; a busy thread (409) says so in plain words. */
export function asApiError(reason: unknown): AnalystApiError | null {
  if (reason === null || reason === undefined) {
    return null;
  }
  if (reason instanceof AnalystApiError) {
    if (reason.isBusy) {
      return new AnalystApiError(409, {
        ...reason.body,
        message: 'This thread is busy: a turn is already running on it. Its progress is shown below; ask again when it ends.',
        reason: reason.reason ?? 'turn_in_progress'
      });
    }
    return reason;
  }
  return new AnalystApiError(0, { message: String(reason), reason: null, hint: null });
}

/** What a conversation view needs of its thread. */
export interface IThreadEvents {
  view: ThreadView;
  /** A turn is in flight (asked, or running): Stop is offered. */
  running: boolean;
  /** Stop was asked; the turn has not ended yet. */
  stopping: boolean;
  connection: Connection;
  /** The last refusal or failure, until the next action. */
  error: AnalystApiError | null;
  /** Ask: start a turn and stream its events. */
  submit: (prompt: string) => Promise<void>;
  /** Stop the turn in flight. */
  stop: () => Promise<void>;
  clearError: () => void;
}

export function useThreadEvents(
  client: AnalystClient,
  threadId: string,
  currentNotebook: CurrentNotebook = () => null
): IThreadEvents {
  const [stream, setStream] = useState<ThreadStream | null>(null);
  const [snapshot, setSnapshot] = useState(() => new ThreadStream(clientTransport(client, threadId)).snapshot);
  // Read when a turn starts: the notebook in front of the user then, not when the view opened.
  const notebookRef = useRef(currentNotebook);
  notebookRef.current = currentNotebook;

  useEffect(() => {
    const next = new ThreadStream(clientTransport(client, threadId, () => notebookRef.current()));
    setStream(next);
    setSnapshot(next.snapshot);
    next.subscribe(setSnapshot);
    void next.open();
    return () => next.dispose();
  }, [client, threadId]);

  const submit = useCallback(async (prompt: string) => stream?.ask(prompt), [stream]);
  const stop = useCallback(async () => stream?.stop(), [stream]);
  const clearError = useCallback(() => stream?.clearError(), [stream]);

  const streamError = snapshot.streamError;
  const error =
    asApiError(snapshot.error) ??
    (streamError ? new AnalystApiError(200, { message: streamError.message, reason: streamError.reason, hint: null }) : null);
  return {
    view: snapshot.model.view,
    running: snapshot.running,
    stopping: snapshot.stopping,
    connection: snapshot.connection,
    error,
    submit,
    stop,
    clearError
  };
}
