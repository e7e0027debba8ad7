import { ServerConnection } from '@jupyterlab/services';

import { AnalystClient, SseFrameSplitter, eventOf, streamErrorOf } from '../api';
import { clientTransport, mergeEvents } from '../threadEvents';

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
    expect(splitter.end()).toEqual([
      { id: null, event: 'error', data: '{"reason": "x"}' }
    ]);
  });
});

describe('frames as events', () => {
  it('reads an event, and an error frame as an error', () => {
    expect(
      eventOf({ id: '3', event: 'answer', data: '{"seq": 3, "type": "answer", "text": "hi"}' })
    ).toMatchObject({ seq: 3, type: 'answer', text: 'hi' });
    const frame = { id: null, event: 'error', data: '{"reason": "turn_failed", "message": "boom"}' };
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
    const client = new AnalystClient(ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' }));
    const bodies: string[] = [];
    jest.spyOn(client, 'request').mockImplementation(async (_path, init) => {
      bodies.push(String(init?.body));
      return new Response('', { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    });
    const transport = clientTransport(client, 'thr_1', () => notebook);
    for await (const frame of transport.start('revenue?', new AbortController().signal, () => undefined)) {
      void frame;
    }
    return JSON.parse(bodies[0]);
  };

  it('carries the notebook open when the turn starts', async () => {
    expect(await sent('work/review.ipynb')).toEqual({ prompt: 'revenue?', notebook: 'work/review.ipynb' });
  });

  it('carries no notebook when none is open', async () => {
    expect(await sent(null)).toEqual({ prompt: 'revenue?' });
  });
});
