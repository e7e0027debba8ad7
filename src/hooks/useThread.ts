/**
 * The selected thread, kept up to date, for React: its view (src/model) built from its
 * history and the live stream of a running turn, with Stop and resume. The work is
 * ThreadStream's (src/transport/threadStream.ts) over the API client
 * (src/transport/threadTransport.ts); this hook re-renders on each change.
 */

import { useCallback, useEffect, useRef, useState } from 'react';

import type { ThreadView } from '../model';
import { AnalystApiError, AnalystClient } from '../transport/api';
import { Connection, ThreadStream } from '../transport/threadStream';
import { clientTransport, type CurrentNotebook } from '../transport/threadTransport';

/** A failure as the banner shows it; a busy thread (409) says so in plain words. */
export function asApiError(reason: unknown): AnalystApiError | null {
  if (reason === null || reason === undefined) {
    return null;
  }
  if (reason instanceof AnalystApiError) {
    if (reason.isBusy) {
      return new AnalystApiError(409, {
        ...reason.body,
        message:
          'This thread is busy: a turn is already running on it. Its progress is shown below; ask again when it ends.',
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
  /** Ask: start a turn and stream its events; resolves to whether the server took the turn (the prompt box clears only then). */
  submit: (prompt: string) => Promise<boolean>;
  /** Stop the turn in flight. */
  stop: () => Promise<void>;
  clearError: () => void;
}

/** The thread `threadId` as the conversation shows it, and what can be done to it. */
export function useThread(
  client: AnalystClient,
  threadId: string,
  currentNotebook: CurrentNotebook = () => null
): IThreadEvents {
  const [stream, setStream] = useState<ThreadStream | null>(null);
  const [snapshot, setSnapshot] = useState(
    () => new ThreadStream(clientTransport(client, threadId)).snapshot
  );
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

  const submit = useCallback(
    (prompt: string): Promise<boolean> =>
      new Promise<boolean>(resolve => {
        if (!stream) {
          resolve(false);
          return;
        }
        // True once the server has taken the turn; false when the ask ended without that
        // (refused, or the server could not be reached): the box then keeps the question.
        void stream.ask(prompt, () => resolve(true)).finally(() => resolve(false));
      }),
    [stream]
  );
  const stop = useCallback(async () => stream?.stop(), [stream]);
  const clearError = useCallback(() => stream?.clearError(), [stream]);

  const streamError = snapshot.streamError;
  const error =
    asApiError(snapshot.error) ??
    (streamError
      ? new AnalystApiError(200, {
          message: streamError.message,
          reason: streamError.reason,
          hint: null
        })
      : null);
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
