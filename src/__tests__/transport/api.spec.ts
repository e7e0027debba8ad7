import { ServerConnection } from '@jupyterlab/services';

import {
  AnalystApiError,
  AnalystClient,
  IVerification,
  IVerifyReport,
  SseFrameSplitter,
  eventOf,
  streamErrorOf,
  verifyThread
} from '../../transport/api';
import { clientTransport, mergeEvents } from '../../transport/threadTransport';

describe('SseFrameSplitter', () => {
  it('splits frames cut anywhere, skipping heartbeats', () => {
    const body =
      'id: 1\nevent: turn_started\ndata: {"seq": 1, "type": "turn_started"}\n\n' +
      ': heartbeat\n\n' +
      'id: 2\r\nevent: text_delta\r\ndata: {"seq": 2,\r\ndata:  "type": "text_delta"}\r\n\r\n';
    // Every cut point: the frames must not depend on how the bytes arrived.
    for (let cut = 0; cut <= body.length; cut++) {
      const splitter = new SseFrameSplitter();
      const frames = [
        ...splitter.push(body.slice(0, cut)),
        ...splitter.push(body.slice(cut)),
        ...splitter.end()
      ];
      expect(frames).toEqual([
        { id: '1', event: 'turn_started', data: '{"seq": 1, "type": "turn_started"}' },
        { id: '2', event: 'text_delta', data: '{"seq": 2,\n "type": "text_delta"}' }
      ]);
    }
  });

  it('keeps a last frame that lacks its blank line', () => {
    const splitter = new SseFrameSplitter();
    expect(splitter.push('event: error\ndata: {"reason": "x"}')).toEqual([]);
    expect(splitter.end()).toEqual([{ id: null, event: 'error', data: '{"reason": "x"}' }]);
  });
});

describe('frames as events', () => {
  it('reads an event, and an error frame as an error', () => {
    expect(
      eventOf({ id: '3', event: 'answer', data: '{"seq": 3, "type": "answer", "text": "hi"}' })
    ).toMatchObject({ seq: 3, type: 'answer', text: 'hi' });
    const frame = {
      id: null,
      event: 'error',
      data: '{"reason": "turn_failed", "message": "boom"}'
    };
    expect(eventOf(frame)).toBeNull();
    expect(streamErrorOf(frame)).toMatchObject({ reason: 'turn_failed', message: 'boom' });
  });
});

describe('AnalystClient.url', () => {
  it('is under the server base URL (JupyterHub: /user/<name>/)', () => {
    const settings = ServerConnection.makeSettings({
      baseUrl: 'http://hub.example/user/ada/'
    });
    const client = new AnalystClient(settings);
    expect(client.url('threads/t1/events', { after: 7 })).toBe(
      'http://hub.example/user/ada/analyst/api/threads/t1/events?after=7'
    );
    expect(client.url('sources')).toBe('http://hub.example/user/ada/analyst/api/sources');
  });
});

describe('mergeEvents', () => {
  const event = (seq: number) => ({
    seq,
    type: 'text_delta',
    thread_id: 't',
    turn_id: 'u',
    ts: '',
    text: String(seq)
  });

  it('keeps each sequence number once, in order', () => {
    const merged = mergeEvents([event(1), event(3)], [event(3), event(2), event(4)]);
    expect(merged.map(e => e.seq)).toEqual([1, 2, 3, 4]);
  });
});

describe('SseFrameSplitter at the end of a stream', () => {
  it('takes a final carriage return as a line end', () => {
    const splitter = new SseFrameSplitter();
    expect(splitter.push('data: {"seq": 1}\r\r')).toEqual([]);
    expect(splitter.end()).toEqual([{ id: null, event: 'message', data: '{"seq": 1}' }]);
  });
});

describe('the turn request', () => {
  const sent = async (notebook: string | null): Promise<Record<string, unknown>> => {
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const bodies: string[] = [];
    jest.spyOn(client, 'request').mockImplementation(async (_path, init) => {
      bodies.push(String(init?.body));
      return new Response('', { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    });
    const transport = clientTransport(client, 'thr_1', () => notebook);
    for await (const frame of transport.start(
      'revenue?',
      new AbortController().signal,
      () => undefined
    )) {
      void frame;
    }
    return JSON.parse(bodies[0]);
  };

  it('carries the notebook open when the turn starts', async () => {
    expect(await sent('work/review.ipynb')).toEqual({
      prompt: 'revenue?',
      notebook: 'work/review.ipynb'
    });
  });

  it('carries no notebook when none is open', async () => {
    expect(await sent(null)).toEqual({ prompt: 'revenue?' });
  });
});

describe('verifyThread', () => {
  const report: IVerifyReport = {
    notebook: null,
    source: 'sales',
    verdict: 'nothing_to_verify',
    checks: [],
    error: null,
    counts: { matched: 0, changed: 0, missing: 0 },
    ok: false
  };
  const verification = (
    status: IVerification['status'],
    extra: Partial<IVerification> = {}
  ): IVerification => ({
    verification_id: 'ver_1',
    thread_id: 'thr_1',
    kind: 'verify',
    status,
    notebook: null,
    source: 'sales',
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    report: null,
    reanswer: null,
    error: null,
    ...extra
  });
  const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json', ...headers }
    });

  /** A client whose requests get `answers` in turn (a thrown error is the server's refusal). */
  const scripted = (answers: Array<() => Response>) => {
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const calls: string[] = [];
    jest.spyOn(client, 'request').mockImplementation(async (path, init) => {
      calls.push(`${init?.method ?? 'GET'} ${path}`);
      const next = answers.shift();
      if (!next) {
        throw new Error(`no answer left for ${path}`);
      }
      return next();
    });
    return { client, calls };
  };

  afterEach(() => jest.useRealTimers());

  it('is answered at once, then read again every Retry-After seconds until done with its report', async () => {
    jest.useFakeTimers();
    const { client, calls } = scripted([
      () => json(verification('queued'), 202, { 'Retry-After': '1' }),
      () => json(verification('running'), 200, { 'Retry-After': '2' }),
      () => json(verification('done', { report }))
    ]);
    const seen: string[] = [];
    const done = verifyThread(client, 'thr_1', { onProgress: v => seen.push(v.status) });
    await jest.advanceTimersByTimeAsync(999);
    expect(calls).toEqual(['POST threads/thr_1/verify']);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1999);
    expect(calls).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    await expect(done).resolves.toEqual(report);
    expect(seen).toEqual(['queued', 'running', 'done']);
    expect(calls).toEqual([
      'POST threads/thr_1/verify',
      'GET threads/thr_1/verifications/ver_1',
      'GET threads/thr_1/verifications/ver_1'
    ]);
  });

  it('throws why a failed verification made no report', async () => {
    const error = {
      message: 'the notebook could not be verified: no source',
      reason: 'verify_failed',
      hint: 'run it'
    };
    const { client } = scripted([
      () => json(verification('queued'), 202),
      () => json(verification('failed', { error }))
    ]);
    const failed = verifyThread(client, 'thr_1', { pollMs: 0 });
    await expect(failed).rejects.toBeInstanceOf(AnalystApiError);
    await expect(failed).rejects.toMatchObject({ reason: 'verify_failed', hint: 'run it' });
  });

  it('follows the verification of the thread already under way instead of failing', async () => {
    const { client, calls } = scripted([
      () => {
        throw new AnalystApiError(409, {
          message: 'a verification of this thread is already under way',
          reason: 'verify_in_progress',
          hint: null,
          verification_id: 'ver_9'
        });
      },
      () => json(verification('done', { verification_id: 'ver_9', report }))
    ]);
    await expect(verifyThread(client, 'thr_1', { path: 'analyst/x.ipynb' })).resolves.toEqual(
      report
    );
    expect(calls).toEqual(['POST threads/thr_1/verify', 'GET threads/thr_1/verifications/ver_9']);
  });

  it('stops reading when it is no longer followed', async () => {
    jest.useFakeTimers();
    const { client, calls } = scripted([
      () => json(verification('running'), 202, { 'Retry-After': '1' })
    ]);
    const controller = new AbortController();
    const followed = verifyThread(client, 'thr_1', { signal: controller.signal });
    const outcome = expect(followed).rejects.toMatchObject({ name: 'AbortError' });
    await jest.advanceTimersByTimeAsync(500);
    controller.abort();
    await outcome;
    await jest.advanceTimersByTimeAsync(5000);
    expect(calls).toEqual(['POST threads/thr_1/verify']);
  });
});
