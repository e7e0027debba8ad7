/**
 * Specs of the thread's stream: history, following a running turn, reconnection with
 * backoff from the last event, gaps filled from the history, a busy thread, and Stop
 * from the first moment of a turn. The transport is a fake server holding the real
 * demo turn's events and writing them as the server's frames.
 */

import type { AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { parseSse, type SseFrame } from '../../model/sse';
import { IThreadTransport, ThreadStream } from '../../transport/threadStream';
import { demoTurn, frameOf, merged } from '../helpers';

const events = demoTurn();
const complete = reduceAll(initialThreadView(), events);

function framesOf(list: readonly AnalystEvent[]): SseFrame[] {
  return parseSse(list.map(frameOf).join(''));
}

function upTo(seq: number): AnalystEvent[] {
  return events.filter(e => e.seq <= seq);
}

function between(after: number, through: number): AnalystEvent[] {
  return events.filter(e => e.seq > after && e.seq <= through);
}

/** An error as the client throws it: an HTTP status (0: no answer). */
function httpError(status: number, reason: string): Error & { status: number; reason: string } {
  return Object.assign(new Error(reason), { status, reason });
}

/** A promise resolved from outside. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>(r => (resolve = r));
  return { promise, resolve };
}

type Script = (after: number) => AsyncIterable<SseFrame>;

/** A stream that says it is open before its first frame, as a server's answer does. */
async function* opened(
  frames: AsyncIterable<SseFrame>,
  onOpen: () => void
): AsyncGenerator<SseFrame> {
  const iterator = frames[Symbol.asyncIterator]();
  let next = iterator.next();
  // A refused connection throws before it opens.
  const first = await next;
  onOpen();
  for (let step = first; !step.done; step = await next) {
    yield step.value;
    next = iterator.next();
  }
}

/** A server whose store holds `stored` events; each stream is the next script's. */
class FakeServer implements IThreadTransport {
  stored: AnalystEvent[] = [];
  isActive = false;
  followScripts: Script[] = [];
  startScript: ((prompt: string) => AsyncIterable<SseFrame>) | null = null;
  cancelReplies: boolean[] = [];
  readonly calls: string[] = [];

  async history(after: number): Promise<unknown[]> {
    this.calls.push(`history ${after}`);
    return this.stored.filter(e => e.seq > after);
  }

  async active(): Promise<boolean> {
    this.calls.push('active');
    return this.isActive;
  }

  follow(after: number, _signal: AbortSignal, onOpen: () => void): AsyncIterable<SseFrame> {
    this.calls.push(`follow ${after}`);
    const script = this.followScripts.shift();
    if (script === undefined) {
      throw new Error(`no stream scripted for follow ${after}`);
    }
    return opened(script(after), onOpen);
  }

  start(prompt: string, _signal: AbortSignal, onOpen: () => void): AsyncIterable<SseFrame> {
    this.calls.push(`start ${prompt}`);
    if (this.startScript === null) {
      throw new Error('no turn scripted');
    }
    return opened(this.startScript(prompt), onOpen);
  }

  async cancel(): Promise<boolean> {
    this.calls.push('cancel');
    return this.cancelReplies.shift() ?? false;
  }
}

async function* stream(frames: SseFrame[], then?: Error): AsyncGenerator<SseFrame> {
  for (const frame of frames) {
    yield frame;
  }
  if (then !== undefined) {
    throw then;
  }
}

/** A stream of no frames that throws at once (the connection is refused). */
function refused(error: Error): AsyncIterable<SseFrame> {
  return {
    [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) })
  };
}

function streamOf(server: FakeServer, waits: number[] = []): ThreadStream {
  return new ThreadStream(server, {
    backoff: attempt => attempt * 100,
    wait: async ms => {
      waits.push(ms);
    }
  });
}

describe('ThreadStream', () => {
  it('loads the history of a thread where nothing runs, and follows nothing', async () => {
    const server = new FakeServer();
    server.stored = events;
    const thread = streamOf(server);
    await thread.open();
    expect(thread.snapshot.model.view).toEqual(complete);
    expect(thread.snapshot.running).toBe(false);
    expect(server.calls).toEqual(['history 0', 'active']);
  });

  it('follows a turn found running (a page reloaded mid-turn) from its last event', async () => {
    const server = new FakeServer();
    server.stored = upTo(12);
    server.isActive = true;
    server.followScripts = [after => stream(framesOf(between(after, 28)))];
    const thread = streamOf(server);
    const seen: boolean[] = [];
    thread.subscribe(s => seen.push(s.running));
    await thread.open();
    expect(server.calls).toEqual(['history 0', 'active', 'follow 12']);
    expect(thread.snapshot.model.view).toEqual(complete);
    expect(seen).toContain(true);
    expect(thread.snapshot.running).toBe(false);
    expect(thread.snapshot.connection).toBe('idle');
  });

  it('reconnects with a growing backoff from the last event, with no gap and no duplicate', async () => {
    const server = new FakeServer();
    server.stored = upTo(3);
    server.isActive = true;
    const lost = httpError(0, 'network_error');
    server.followScripts = [
      // Events through 9, then the network goes.
      after => stream(framesOf(between(after, 9)), lost),
      // The server is restarting: refused twice.
      () => refused(httpError(503, 'unavailable')),
      () => refused(lost),
      // Back: the server replays from where the client says, overlapping nothing.
      after => stream(framesOf(between(after, 28)))
    ];
    const waits: number[] = [];
    const states: string[] = [];
    const thread = streamOf(server, waits);
    thread.subscribe(s => {
      if (states[states.length - 1] !== s.connection) {
        states.push(s.connection);
      }
    });
    await thread.open();
    expect(server.calls).toEqual([
      'history 0',
      'active',
      'follow 3',
      'follow 9',
      'follow 9',
      'follow 9'
    ]);
    expect(waits).toEqual([100, 200, 300]);
    expect(states).toEqual(['idle', 'live', 'reconnecting', 'live', 'idle']);
    expect(thread.snapshot.model.view).toEqual(complete);
  });

  it('takes a replay that overlaps what it has only once', async () => {
    const server = new FakeServer();
    server.stored = upTo(5);
    server.isActive = true;
    server.followScripts = [
      () => stream(framesOf(between(5, 14)), httpError(0, 'network_error')),
      // A proxy replays from an older id.
      () => stream(framesOf(between(2, 28)))
    ];
    const thread = streamOf(server);
    await thread.open();
    expect(thread.snapshot.model.view).toEqual(complete);
  });

  it('fills a gap of the stream from the history', async () => {
    const server = new FakeServer();
    server.stored = events;
    server.isActive = true;
    const withoutEleven = events.filter(e => e.seq > 8 && e.seq !== 11);
    server.followScripts = [() => stream(framesOf(withoutEleven))];
    const thread = streamOf(server);
    // The history known at open time stops at 8.
    const history = server.history.bind(server);
    let first = true;
    server.history = async after => {
      if (first) {
        first = false;
        server.calls.push(`history ${after}`);
        return upTo(8);
      }
      return history(after);
    };
    await thread.open();
    expect(server.calls).toContain('history 10');
    expect(thread.snapshot.model.view).toEqual(complete);
  });

  it('reads text deltas the server merged for a slow client', async () => {
    const server = new FakeServer();
    server.stored = upTo(3);
    server.isActive = true;
    const text = events.filter(e => e.seq >= 4 && e.seq <= 6) as Parameters<typeof merged>[0];
    const arrived = [merged(text), ...between(6, 28)];
    server.followScripts = [() => stream(framesOf(arrived))];
    const thread = streamOf(server);
    await thread.open();
    // The same view as the events one by one, the text block numbered from its merged frame.
    expect(thread.snapshot.model.view).toEqual(
      reduceAll(initialThreadView(), [...upTo(3), ...arrived])
    );
    expect(thread.snapshot.model.view.turns[0].items[0]).toMatchObject({
      text: 'Let me look at the tables first.'
    });
    expect(server.calls).toEqual(['history 0', 'active', 'follow 3']);
  });

  it('asks: Stop is offered before any event, and the turn is read to its end', async () => {
    const server = new FakeServer();
    const gate = deferred();
    server.startScript = async function* () {
      await gate.promise;
      yield* framesOf(events);
    };
    const thread = streamOf(server);
    await thread.open();
    const asked = thread.ask('Revenue by region per month, with a chart');
    expect(thread.snapshot.running).toBe(true);
    expect(thread.snapshot.connection).toBe('sending');
    gate.resolve();
    await asked;
    expect(thread.snapshot.model.view).toEqual(complete);
    expect(thread.snapshot.running).toBe(false);
  });

  it('follows the turn when the stream of the ask drops before its end', async () => {
    const server = new FakeServer();
    server.startScript = () => stream(framesOf(upTo(7)), httpError(0, 'network_error'));
    server.isActive = true;
    server.followScripts = [after => stream(framesOf(between(after, 28)))];
    const thread = streamOf(server);
    await thread.ask('q');
    expect(server.calls).toEqual(['start q', 'follow 7']);
    expect(thread.snapshot.model.view).toEqual(complete);
  });

  it('says a busy thread is busy (409) and follows its running turn', async () => {
    const server = new FakeServer();
    server.stored = upTo(4);
    server.isActive = true;
    const busy = httpError(409, 'turn_in_progress');
    server.startScript = () => refused(busy);
    server.followScripts = [after => stream(framesOf(between(after, 28)))];
    const thread = streamOf(server);
    server.isActive = false;
    await thread.open();
    server.isActive = true;
    await thread.ask('again');
    expect(thread.snapshot.error).toBe(busy);
    expect(server.calls).toEqual(['history 0', 'active', 'start again', 'follow 4']);
    expect(thread.snapshot.model.view).toEqual(complete);
  });

  it('does not retry a refusal (no model configured)', async () => {
    const server = new FakeServer();
    const noModel = httpError(400, 'no_model');
    server.startScript = () => refused(noModel);
    const thread = streamOf(server);
    await thread.ask('q');
    expect(thread.snapshot.error).toBe(noModel);
    expect(thread.snapshot.running).toBe(false);
    expect(server.calls).toEqual(['start q']);
  });

  it('stops a turn asked a moment ago: the cancel is repeated once the turn exists', async () => {
    const server = new FakeServer();
    const gate = deferred();
    const interrupted: AnalystEvent = {
      ...(events[26] as Extract<AnalystEvent, { type: 'turn_ended' }>),
      seq: 4,
      status: 'interrupted',
      message: 'stopped by the user'
    };
    server.startScript = async function* () {
      await gate.promise;
      yield* framesOf([...upTo(3), interrupted]);
    };
    // The cancel reaches the server before the turn: nothing to stop yet; then it stops.
    server.cancelReplies = [false, true];
    const thread = streamOf(server);
    const asked = thread.ask('count slowly');
    await thread.stop();
    expect(thread.snapshot.stopping).toBe(true);
    gate.resolve();
    await asked;
    expect(server.calls.filter(c => c === 'cancel')).toHaveLength(2);
    const turn = thread.snapshot.model.view.turns[0];
    expect(turn.status).toBe('interrupted');
    expect(thread.snapshot.running).toBe(false);
    expect(thread.snapshot.stopping).toBe(false);
  });

  it('ends its streams when disposed', async () => {
    const server = new FakeServer();
    server.isActive = true;
    const gate = deferred();
    server.followScripts = [
      async function* () {
        yield* framesOf(upTo(3));
        await gate.promise;
        yield* framesOf(between(3, 28));
      }
    ];
    const thread = streamOf(server);
    const live = new Promise<void>(resolve =>
      thread.subscribe(s => s.model.delivery.lastSeq === 3 && resolve())
    );
    const opened = thread.open();
    await live;
    thread.dispose();
    gate.resolve();
    await opened;
    expect(thread.snapshot.model.delivery.lastSeq).toBe(3);
  });
});
