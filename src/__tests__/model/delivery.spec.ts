import {
  deliver,
  initialDelivery,
  initialThreadModel,
  missing,
  openStream,
  receive,
  receiveAll,
  receiveFrames,
  receiveUnreadable,
  type ThreadModel
} from '../../model/delivery';
import { parseEvent, type AnalystEvent, type TextDelta } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView, type ThreadView } from '../../model/view';
import { SseParser } from '../../model/sse';
import { demoTurn, frameOf, merged, shuffled } from '../helpers';

const events = demoTurn();
/** The view of the turn applied once, in order: what every delivery must end with. */
const expected: ThreadView = reduceAll(initialThreadView(), events);

function bySeq(seqs: number[]): AnalystEvent[] {
  return seqs.map(seq => {
    const found = events.find(e => e.seq === seq);
    if (found === undefined) {
      throw new Error(`no event ${seq}`);
    }
    return found;
  });
}

function range(from: number, through: number): number[] {
  return Array.from({ length: through - from + 1 }, (_, i) => from + i);
}

/** Events one at a time, of unknown provenance (no stream order to lean on). */
function receiveEach(model: ThreadModel, list: readonly AnalystEvent[]): ThreadModel {
  return list.reduce((m, e) => receive(m, e), model);
}

describe('delivery in order', () => {
  it('applies each event as it comes and tracks lastSeq for resuming', () => {
    let d = initialDelivery();
    for (const event of events) {
      const out = deliver(d, event);
      expect(out.ready).toEqual([event]);
      d = out.delivery;
      expect(d.lastSeq).toBe(event.seq);
      expect(missing(d)).toBeNull();
    }
    expect(receiveAll(initialThreadModel(), events, 0).view).toEqual(expected);
  });
});

describe('duplicated delivery', () => {
  it('applies an event delivered twice once, and the second delivery changes nothing', () => {
    const once = receiveEach(initialThreadModel(), events);
    for (const event of events) {
      expect(deliver(once.delivery, event).ready).toEqual([]);
      expect(receive(once, event)).toBe(once);
    }
    const doubled = receiveEach(
      initialThreadModel(),
      events.reduce<AnalystEvent[]>((out, e) => [...out, e, e], [])
    );
    expect(doubled.view).toEqual(expected);
    // The text was not doubled: the one text block holds each piece once.
    const text = doubled.view.turns[0].items[0];
    expect(text.kind === 'text' && text.text).toBe('Let me look at the tables first.');
  });
});

describe('out-of-order delivery', () => {
  it('holds an event after a gap, says what is missing, and applies the run once the gap fills', () => {
    let model = receiveEach(initialThreadModel(), bySeq([1, 2]));
    model = receive(model, bySeq([5])[0]);
    expect(model.delivery.lastSeq).toBe(2);
    expect(model.view.lastSeq).toBe(2);
    expect(missing(model.delivery)).toEqual({ after: 2, through: 4 });
    model = receive(model, bySeq([4])[0]);
    expect(missing(model.delivery)).toEqual({ after: 2, through: 3 });
    model = receive(model, bySeq([3])[0]);
    expect(model.delivery.lastSeq).toBe(5);
    expect(missing(model.delivery)).toBeNull();
    expect(model.view).toEqual(reduceAll(initialThreadView(), bySeq(range(1, 5))));
  });

  it.each([1, 2, 3, 42, 2026])(
    'ends with the in-order view for any arrival order (shuffle %i)',
    seed => {
      const model = receiveEach(initialThreadModel(), shuffled(events, seed));
      expect(model.view).toEqual(expected);
      expect(model.delivery.lastSeq).toBe(28);
      expect(model.delivery.held).toHaveLength(0);
    }
  );

  it('ends with the in-order view when everything comes backwards, each event twice', () => {
    const backwards = events
      .slice()
      .reverse()
      .reduce<AnalystEvent[]>((out, e) => [...out, e, e], []);
    expect(receiveEach(initialThreadModel(), backwards).view).toEqual(expected);
  });
});

describe('resume', () => {
  it('a new stream after lastSeq continues with no gap and no duplicate', () => {
    // The first stream is cut after event 15; the client opens ?after=15 (Last-Event-ID: 15).
    const first = receiveAll(initialThreadModel(), events.slice(0, 15), 0);
    expect(first.delivery.lastSeq).toBe(15);
    const resumed = receiveAll(first, events.slice(15), first.delivery.lastSeq);
    expect(resumed.view).toEqual(expected);
  });

  it('a replay that overlaps what was applied changes nothing already shown', () => {
    const first = receiveAll(initialThreadModel(), events.slice(0, 20), 0);
    const replayedOnly = receiveAll(first, events.slice(9, 20), 9);
    expect(replayedOnly).toBe(first);
    expect(receiveAll(first, events.slice(9), 9).view).toEqual(expected);
  });

  it('reads a stream cut in the middle of a frame, then the resumed stream, into the in-order view', () => {
    const body = events.map(frameOf).join('');
    const cut = body.indexOf('"type":"tool_result"', body.indexOf('id: 13'));
    const parser = new SseParser();
    let model = initialThreadModel();
    let previous = 0;
    for (const frame of parser.push(body.slice(0, cut))) {
      const event = parseEvent(frame.data);
      expect(event).not.toBeNull();
      if (event !== null) {
        model = receive(model, event, previous);
        previous = event.seq;
      }
    }
    parser.end(); // the connection dropped in the middle of frame 13
    expect(model.delivery.lastSeq).toBe(12);
    expect(parser.lastEventId).toBe('12');
    const after = model.delivery.lastSeq;
    const resumedBody = events
      .filter(e => e.seq > after)
      .map(frameOf)
      .join('');
    const frames = new SseParser().push(resumedBody);
    model = receiveAll(
      model,
      frames.map(f => parseEvent(f.data)).filter((e): e is AnalystEvent => e !== null),
      after
    );
    expect(model.view).toEqual(expected);
  });
});

describe('text deltas the server merged for a slow client', () => {
  const deltas = bySeq([4, 5, 6]) as TextDelta[];
  const merged456 = merged(deltas); // seq 6, the text of 4, 5 and 6

  it('on one stream, a merged delta stands for the events it skipped', () => {
    const stream = [...bySeq([1, 2, 3]), merged456, ...bySeq(range(7, 28))];
    const model = receiveAll(initialThreadModel(), stream, 0);
    expect(missing(model.delivery)).toBeNull();
    expect(model.view).toEqual({
      ...expected,
      turns: [
        {
          ...expected.turns[0],
          items: [
            { ...expected.turns[0].items[0], firstSeq: 6 },
            ...expected.turns[0].items.slice(1)
          ]
        }
      ]
    });
  });

  it('a merged delta that overlaps what is applied is dropped and its range fetched from the history, never doubling text', () => {
    let model = receiveAll(initialThreadModel(), bySeq(range(1, 4)), 0);
    // A second stream, opened after 3, sends the merged delta: 4 is applied already.
    model = receive(model, merged456, 3);
    expect(model.delivery.lastSeq).toBe(4);
    expect(missing(model.delivery)).toEqual({ after: 4, through: 6 });
    // The client fetches ?after=4 from the history, which never merges.
    model = receiveAll(model, bySeq(range(5, 28)), 4);
    expect(model.view).toEqual(expected);
  });

  it('a merged delta that arrives ahead of a gap waits, then applies once; the history copies are duplicates', () => {
    let model = receiveAll(initialThreadModel(), bySeq([1, 2]), 0);
    model = receive(model, merged456, 3); // from a stream opened after 3
    expect(missing(model.delivery)).toEqual({ after: 2, through: 3 });
    model = receiveAll(model, bySeq(range(3, 28)), 2); // the history fills the gap, with 4, 5, 6 again
    const text = model.view.turns[0].items[0];
    expect(text.kind === 'text' && text.text).toBe('Let me look at the tables first.');
    expect(model.delivery.lastSeq).toBe(28);
    expect(missing(model.delivery)).toBeNull();
  });

  it('a delta without its stream position (a history event) is taken as that one event', () => {
    let model = receiveAll(initialThreadModel(), bySeq([1, 2, 3]), 0);
    model = receive(model, merged456);
    expect(model.delivery.lastSeq).toBe(3);
    expect(missing(model.delivery)).toEqual({ after: 3, through: 5 });
  });
});

describe('a malformed frame', () => {
  it('is refused by the guard; its id is passed over so the events after it still apply', () => {
    const body =
      events.slice(0, 6).map(frameOf).join('') +
      'id: 7\nevent: tool_call\ndata: {"type": "tool_call", "seq": 7, "call_id": \n\n' +
      events.slice(7, 10).map(frameOf).join('');
    let model = initialThreadModel();
    for (const frame of new SseParser().push(body)) {
      const event = parseEvent(frame.data);
      model = event === null ? receiveUnreadable(model, Number(frame.id)) : receive(model, event);
    }
    expect(model.delivery.lastSeq).toBe(10);
    expect(missing(model.delivery)).toBeNull();
    // The tool's result still has its card (its call frame was lost); nothing else changed.
    expect(model.view).toEqual(
      reduceAll(initialThreadView(), [...events.slice(0, 6), ...events.slice(7, 10)])
    );
  });

  it('passed over late, it releases the events that waited behind it', () => {
    let model = receiveEach(initialThreadModel(), [...bySeq(range(1, 6)), ...bySeq(range(8, 28))]);
    expect(missing(model.delivery)).toEqual({ after: 6, through: 7 });
    model = receiveUnreadable(model, 7);
    expect(model.delivery.lastSeq).toBe(28);
    expect(model.view.turns[0].status).toBe('completed');
  });
});

describe('receiveFrames: the frames of one stream', () => {
  it('feeds a stream body (merged text, a heartbeat, a malformed frame, the error frame) into the model', () => {
    const [one, two, three] = bySeq([1, 2, 3]);
    const body =
      [one, two, three].map(frameOf).join('') +
      frameOf(merged(bySeq([4, 5, 6]) as TextDelta[])) +
      ': heartbeat\n\n' +
      'id: 7\nevent: tool_call\ndata: {"type": "tool_call", "seq": 7}\n\n' +
      bySeq(range(8, 20)).map(frameOf).join('') +
      'event: error\ndata: {"reason": "turn_failed", "message": "the workspace is read-only"}\n\n';
    const parser = new SseParser();
    let progress = openStream(initialThreadModel(), 0);
    for (let at = 0; at < body.length; at += 97) {
      progress = receiveFrames(progress, parser.push(body.slice(at, at + 97)));
    }
    expect(progress.previous).toBe(20);
    expect(progress.error).toEqual({
      reason: 'turn_failed',
      message: 'the workspace is read-only'
    });
    expect(progress.model.delivery.lastSeq).toBe(20);
    expect(missing(progress.model.delivery)).toBeNull();
    const text = progress.model.view.turns[0].items[0];
    expect(text.kind === 'text' && text.text).toBe('Let me look at the tables first.');
    // The resumed stream picks up after 20 and ends with the whole turn.
    const resumed = receiveFrames(
      openStream(progress.model, 20),
      new SseParser().push(bySeq(range(21, 28)).map(frameOf).join(''))
    );
    expect(resumed.model.view.turns[0].status).toBe('completed');
    expect(resumed.model.view.lastSeq).toBe(28);
  });
});
