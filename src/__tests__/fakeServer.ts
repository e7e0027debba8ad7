/**
 * A server for specs that mount the panel's containers (Sidebar, Conversation): the API
 * client's methods the panel calls, answered from a store of threads and of the real demo
 * turn's events (helpers.ts), a turn's stream written as the server writes its frames and
 * held open until the spec ends the turn. Each call is recorded, so a spec asserts what the
 * panel asked of the server (a Stop sends the cancel).
 */

import type { BudgetReply } from '../model/budget';
import type { AnalystEvent } from '../model/events';
import type { VerifiedAnswer } from '../model/verifiedAnswer';
import {
  AnalystApiError,
  type AnalystClient,
  type IServerConfig,
  type ITablesReply,
  type IThread
} from '../transport/api';
import { demoTurn, frameOf } from './helpers';

/** A thread as the server lists it. */
export function threadOf(id: string, title: string | null, extra: Partial<IThread> = {}): IThread {
  return {
    thread_id: id,
    user: 'ada',
    title,
    source: 'sales',
    created_at: '2026-11-27T10:00:00Z',
    last_activity: '2026-11-27T10:00:00Z',
    running: false,
    ...extra
  };
}

/** The demo turn's first `count` events, then its end as `status` (the turn stopped there). */
export function endedAt(count: number, status: 'interrupted' | 'error'): AnalystEvent[] {
  const events = demoTurn();
  const end = events.find(e => e.type === 'turn_ended');
  if (end === undefined) {
    throw new Error('the demo turn has no end');
  }
  return [
    ...events.slice(0, count),
    { ...end, seq: count + 1, status, message: null } as AnalystEvent
  ];
}

/** A response whose body is written later (`write`), as a turn's stream is. */
function heldResponse(): { response: Response; write: (text: string) => void } {
  let write: (text: string) => void = () => undefined;
  const text = new Promise<string>(resolve => (write = resolve));
  return { response: { ok: true, status: 200, body: null, text: () => text } as Response, write };
}

export class FakeServer {
  /** Every call the panel made, in order ("events thr_1 0", "POST turns thr_1", "cancel thr_1"). */
  readonly calls: string[] = [];
  /** The events the store holds, by thread. */
  readonly stored = new Map<string, AnalystEvent[]>();
  /** The threads whose turn runs now. */
  readonly active = new Set<string>();
  private readonly _streams: ((text: string) => void)[] = [];
  /** What `GET threads/{id}/tables` answers, for every thread. */
  offer: ITablesReply = { source: 'sales', tables: [], more: 0, suggestions: [] };
  /** The server's model, as `GET config` says it. */
  model: IServerConfig['model'] = {
    configured: true,
    name: 'm',
    base_url: null,
    scripted: true,
    hint: null
  };

  /** Whether `GET config` says the server has a context folder. */
  contextFolder = false;
  /** What `GET budget` answers (the query it was asked with is in `budgetQueries`). */
  budget: BudgetReply = {
    user: 'ada',
    limited: false,
    timezone: 'UTC',
    budgets: [],
    exhausted: false,
    message: null
  };
  readonly budgetQueries: (Record<string, string | number> | undefined)[] = [];
  /** What `POST threads/{id}/verified-answers` answers: what was written, or a refusal. */
  verification: VerifiedAnswer | AnalystApiError | null = null;

  constructor(public threads: IThread[]) {}

  /** A response with `body` as its JSON. */
  private static json(body: unknown): Response {
    return { ok: true, status: 200, json: async () => body } as Response;
  }

  /** The client the panel is given. */
  client(): AnalystClient {
    const events = (threadId: string, after = 0): AnalystEvent[] =>
      (this.stored.get(threadId) ?? []).filter(e => e.seq > after);
    const fake = {
      settings: { baseUrl: 'http://127.0.0.1:8888/' },
      config: async () => ({
        version: '0',
        model: this.model,
        sources: ['sales'],
        context: { configured: this.contextFolder },
        limits: {}
      }),
      sources: async () => [{ name: 'sales', kind: 'path' }],
      threads: async () => {
        this.calls.push('threads');
        return this.threads;
      },
      thread: async (threadId: string) => {
        this.calls.push(`thread ${threadId}`);
        return {
          thread: this.threads.find(t => t.thread_id === threadId),
          active: this.active.has(threadId)
        };
      },
      tables: async () => this.offer,
      events: async (threadId: string, after = 0) => {
        this.calls.push(`events ${threadId} ${after}`);
        return events(threadId, after);
      },
      request: async (
        path: string,
        init: RequestInit = {},
        query?: Record<string, string | number>
      ) => {
        if (path === 'budget') {
          this.budgetQueries.push(query);
          return FakeServer.json(this.budget);
        }
        const [, threadId, what] = path.split('/');
        this.calls.push(`${init.method ?? 'GET'} ${what} ${threadId}`);
        if (what === 'verified-answers') {
          const answer = this.verification;
          if (answer instanceof AnalystApiError) {
            throw answer;
          }
          this.calls.push(`body ${String(init.body)}`);
          return FakeServer.json(answer);
        }
        if (what === 'turns' && this.active.has(threadId)) {
          // As the server refuses a second turn on a thread (one turn at a time).
          throw new AnalystApiError(409, {
            message: 'a turn is already running on this thread',
            reason: 'turn_in_progress',
            hint: null
          });
        }
        if (what === 'turns') {
          this.active.add(threadId);
        }
        const held = heldResponse();
        this._streams.push(held.write);
        return held.response;
      },
      cancel: async (threadId: string) => {
        this.calls.push(`cancel ${threadId}`);
        return this.active.has(threadId);
      },
      artifact: () => new Promise(() => undefined),
      preview: () => new Promise(() => undefined),
      artifacts: async () => [],
      artifactContentUrl: (artifactId: string) => `http://127.0.0.1:8888/artifacts/${artifactId}`
    };
    return fake as unknown as AnalystClient;
  }

  /** A turn started elsewhere (another tab) runs on `threadId` until `endTurn`. */
  startTurn(threadId: string): void {
    this.active.add(threadId);
  }

  /** The turn on `threadId` ends with `events` (stored, and written to the open streams). */
  endTurn(threadId: string, events: AnalystEvent[]): void {
    this.stored.set(threadId, [...(this.stored.get(threadId) ?? []), ...events]);
    this.active.delete(threadId);
    const text = events.map(frameOf).join('');
    for (const write of this._streams.splice(0)) {
      write(text);
    }
  }
}
