import { parseEvent, parseStreamError } from '../../model/events';
import { parseSse, SseParser, type SseFrame } from '../../model/sse';
import { demoTurn, frameOf } from '../helpers';

/** A body like one a turn's stream sends: frames, a heartbeat, and a last error frame. */
function streamBody(): string {
  const events = demoTurn().slice(0, 8);
  return (
    events.slice(0, 4).map(frameOf).join('') +
    ': heartbeat\n\n' +
    events.slice(4).map(frameOf).join('') +
    'event: error\ndata: {"reason": "turn_failed", "message": "the kernel died"}\n\n'
  );
}

function feed(chunks: string[]): { frames: SseFrame[]; parser: SseParser } {
  const parser = new SseParser();
  const frames = chunks.reduce<SseFrame[]>((out, chunk) => [...out, ...parser.push(chunk)], []);
  return { frames, parser };
}

describe('SseParser', () => {
  it('reads the frames the server writes: id = seq, event = type, data = the event JSON', () => {
    const events = demoTurn();
    const frames = parseSse(events.map(frameOf).join(''));
    expect(frames.map(f => Number(f.id))).toEqual(events.map(e => e.seq));
    expect(frames.map(f => f.event)).toEqual(events.map(e => e.type));
    expect(frames.map(f => parseEvent(f.data))).toEqual(events);
  });

  it('skips heartbeat comments, counts them, and reads the final error frame', () => {
    const { frames, parser } = feed([streamBody()]);
    expect(frames).toHaveLength(9);
    expect(parser.comments).toBe(1);
    const last = frames[frames.length - 1];
    expect(last.event).toBe('error');
    expect(last.id).toBe('8'); // an id is kept until another one comes, as the standard says
    expect(parseEvent(last.data)).toBeNull();
    expect(parseStreamError(last.data)).toEqual({
      reason: 'turn_failed',
      message: 'the kernel died'
    });
  });

  it('gives the same frames however the body is split in two, at every position', () => {
    const body = streamBody();
    const whole = parseSse(body);
    for (let cut = 0; cut <= body.length; cut++) {
      expect(feed([body.slice(0, cut), body.slice(cut)]).frames).toEqual(whole);
    }
  });

  it('gives the same frames when the body comes one character at a time', () => {
    const body = streamBody();
    expect(feed(Array.from(body)).frames).toEqual(parseSse(body));
  });

  it('takes CRLF, CR and LF line ends, also a CRLF split between two chunks', () => {
    const lf = 'id: 1\nevent: text_delta\ndata: a\n\nid: 2\ndata: b\n\n';
    const expected = parseSse(lf);
    expect(expected).toEqual([
      { id: '1', event: 'text_delta', data: 'a' },
      { id: '2', event: 'message', data: 'b' }
    ]);
    const crlf = lf.replace(/\n/g, '\r\n');
    const cr = lf.replace(/\n/g, '\r');
    for (const body of [crlf, cr]) {
      expect(parseSse(body)).toEqual(expected);
      for (let cut = 0; cut <= body.length; cut++) {
        expect(feed([body.slice(0, cut), body.slice(cut)]).frames).toEqual(expected);
      }
    }
    // A CR that ends a chunk, then the LF: one line end, not a blank line that would
    // dispatch the frame before its data.
    expect(feed(['id: 3\r', '\ndata: x\r', '\n\r', '\n']).frames).toEqual([
      { id: '3', event: 'message', data: 'x' }
    ]);
  });

  it('joins multi-line data with LF and keeps what follows the first space after the colon', () => {
    const frames = parseSse('data: {"a":\ndata:1}\ndata\ndata:  two spaces\n\n');
    expect(frames).toEqual([{ id: '', event: 'message', data: '{"a":\n1}\n\n two spaces' }]);
  });

  it('keeps the reconnection time of a retry field with digits only', () => {
    const { parser } = feed(['retry: 3000\n\n', 'retry: 2s\n\n']);
    expect(parser.retry).toBe(3000);
    expect(new SseParser().retry).toBeNull();
  });

  it('keeps the last id for Last-Event-ID, ignores an id with NUL, and does not dispatch a frame without data', () => {
    const { frames, parser } = feed([
      'id: 41\nevent: state\n\n',
      'id: 4\u00002\n\n',
      'unknown: field\n\n'
    ]);
    expect(frames).toEqual([]);
    expect(parser.lastEventId).toBe('41');
  });

  it('drops a frame the connection cut before its blank line', () => {
    const parser = new SseParser();
    expect(parser.push('id: 1\ndata: whole\n\nid: 2\ndata: {"cut')).toEqual([
      { id: '1', event: 'message', data: 'whole' }
    ]);
    parser.end();
    expect(parser.lastEventId).toBe('1'); // a resumed stream asks again for the cut frame
    expect(parser.push('data: next\n\n')).toEqual([{ id: '1', event: 'message', data: 'next' }]);
  });

  it('drops one byte order mark at the start of the stream only', () => {
    expect(parseSse('\ufeffdata: a\n\n')).toEqual([{ id: '', event: 'message', data: 'a' }]);
    // A BOM later in the stream is part of a field name, so that line is an unknown field.
    expect(feed(['data: a\n\n', '\ufeffdata: b\n\n']).frames).toHaveLength(1);
  });
});
