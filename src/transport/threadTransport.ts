/**
 * The API client as a thread's transport (src/transport/threadStream.ts's IThreadTransport):
 * its history, whether a turn runs, the event stream of a turn followed or started, and Stop.
 */

import type { SseFrame } from '../model';
import { AnalystClient, INewTurn, IRawEvent, ISseFrame, readFrames } from './api';
import type { IThreadTransport } from './threadStream';

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
 * The notebook a turn works beside: the path of the notebook the question carries (the
 * prompt's chip: the one in front, one the user chose, or none once detached), asked when
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
      streamOf(
        client.request(`${path}/events`, { headers: EVENT_STREAM, signal }, { after }),
        onOpen
      ),
    start: (prompt, signal, onOpen) => {
      const notebook = currentNotebook();
      const turn: INewTurn = notebook ? { prompt, notebook } : { prompt };
      const body = JSON.stringify(turn);
      return streamOf(
        client.request(`${path}/turns`, { method: 'POST', body, headers: EVENT_STREAM, signal }),
        onOpen
      );
    },
    cancel: () => client.cancel(threadId)
  };
}
