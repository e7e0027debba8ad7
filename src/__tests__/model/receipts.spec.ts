/**
 * An answer's receipts as the panel reads them: the spans the server sent kept only where
 * they fit the answer (in range, its text there, clear of the spans before), and placed on
 * the rendered text at the same occurrence as in the source, or not at all.
 */

import {
  answerMarks,
  isWholeToken,
  parseEvent,
  placeInRendered,
  spanOf,
  tokenStarts,
  type Citation,
  type UnsupportedClaim
} from '../../model';

const ANSWER = 'Frontier was worst at 21.9 min, 4.2 more than Spirit; 21.9 is 38% up.';

function cite(text: string, from = 0, extra: Partial<Citation> = {}): Citation {
  const start = ANSWER.indexOf(text, from);
  return {
    start,
    end: start + text.length,
    text,
    kind: 'number',
    value: Number(text),
    call_id: 'call_sql',
    artifact_id: 'art_sql',
    row: 3,
    column: 'avg_delay',
    derived: null,
    ...extra
  };
}

function claim(text: string, extra: Partial<UnsupportedClaim> = {}): UnsupportedClaim {
  const start = ANSWER.indexOf(text);
  return { start, end: start + text.length, text, kind: 'percent', value: 38, ...extra };
}

const texts = (marks: ReturnType<typeof answerMarks>): string[] =>
  marks.map(m => `${m.kind}:${spanOf(m).text}@${spanOf(m).start}`);

describe('answerMarks', () => {
  it('keeps the spans that fit, in the answer’s order, each with its index in the citations', () => {
    const second = cite('21.9', ANSWER.indexOf('21.9') + 1);
    const marks = answerMarks(ANSWER, [second, cite('21.9')], [claim('38%')]);
    expect(texts(marks)).toEqual([
      `cited:21.9@${ANSWER.indexOf('21.9')}`,
      `cited:21.9@${second.start}`,
      `unsupported:38%@${ANSWER.indexOf('38%')}`
    ]);
    expect(marks.map(m => (m.kind === 'cited' ? m.index : null))).toEqual([1, 0, null]);
  });

  it.each<[string, Partial<Citation>]>([
    ['past the end', { start: ANSWER.length - 2, end: ANSWER.length + 2 }],
    ['before the start', { start: -1, end: 3 }],
    ['empty', { start: 5, end: 5 }],
    ['backwards', { start: 9, end: 5 }],
    ['not a whole offset', { start: 22.5, end: 26.5 }],
    ['of text the answer does not have there', { text: '22.0' }],
    ['shifted by one', { start: ANSWER.indexOf('21.9') + 1, end: ANSWER.indexOf('21.9') + 5 }]
  ])('leaves out a span %s', (_why, bad) => {
    expect(answerMarks(ANSWER, [cite('21.9', 0, bad)], [])).toEqual([]);
  });

  it('keeps the first of two overlapping spans, and a citation before a claim at one place', () => {
    const wide = { ...cite('21.9 min'), kind: 'number' as const };
    const inner = cite('21.9');
    expect(texts(answerMarks(ANSWER, [inner, wide], []))).toEqual([`cited:21.9@${inner.start}`]);
    const sameAsClaim = claim('21.9', { kind: 'number', value: 21.9 });
    expect(texts(answerMarks(ANSWER, [inner], [sameAsClaim]))).toEqual([
      `cited:21.9@${inner.start}`
    ]);
    // Nested the other way: the outer span starts first and wins.
    const outer = cite('at 21.9');
    expect(texts(answerMarks(ANSWER, [inner, outer], []))).toEqual([
      `cited:at 21.9@${outer.start}`
    ]);
  });

  it('marks nothing for no receipts', () => {
    expect(answerMarks('', [], [])).toEqual([]);
    expect(answerMarks(ANSWER, [], [])).toEqual([]);
  });
});

describe('whole tokens', () => {
  it('does not take a number out of a longer one, a word or a figure with separators', () => {
    expect(tokenStarts('21.9 and 121.9 and 21.95 and 21.9.', '21.9')).toEqual([0, 29]);
    expect(tokenStarts('1,620 and 620', '620')).toEqual([10]);
    expect(tokenStarts('21.9', '21')).toEqual([]);
    expect(tokenStarts('Frontier, Frontiers', 'Frontier')).toEqual([0]);
    expect(tokenStarts('anything', '')).toEqual([]);
    expect(isWholeToken('(38%)', 1, 4)).toBe(true);
  });
});

describe('placeInRendered', () => {
  const source = '**21.9** min; [21.9](https://x/21.9) and 21.9';

  it('places a mark at the same occurrence of its text in the rendered text', () => {
    const rendered = '21.9 min; 21.9 and 21.9';
    const marks = [
      { start: source.indexOf('min'), text: 'min' },
      { start: source.lastIndexOf('21.9'), text: '21.9' }
    ];
    // The link's address writes 21.9 once more than the rendering shows: not placed.
    expect(placeInRendered(source, rendered, marks)).toEqual([5, null]);
    const plain = 'a 21.9, b 21.9';
    expect(
      placeInRendered(plain, plain, [
        { start: 2, text: '21.9' },
        { start: 10, text: '21.9' }
      ])
    ).toEqual([2, 10]);
  });

  it('places nothing the source does not have at that start, or out of order', () => {
    expect(placeInRendered('x 21.9', 'x 21.9', [{ start: 0, text: '21.9' }])).toEqual([null]);
    // Rendered in another order than written (a footnote moved up): the second is refused.
    expect(
      placeInRendered('5 then 7', '7 then 5', [
        { start: 0, text: '5' },
        { start: 7, text: '7' }
      ])
    ).toEqual([7, null]);
  });
});

describe('the receipts of a turn’s end', () => {
  const end = {
    type: 'turn_ended',
    seq: 9,
    status: 'completed',
    message: null,
    counters: {},
    ledger: null
  };

  it('reads citations and unsupported claims, with the server’s defaults', () => {
    const event = parseEvent({
      ...end,
      citations: [
        { start: 0, end: 4, text: '21.9', kind: 'number', value: 21.92, call_id: 'call_1' },
        {
          start: 9,
          end: 12,
          text: '4.2',
          kind: 'number',
          value: 4.2,
          call_id: null,
          derived: { operation: 'difference', of: [0, 2] }
        }
      ],
      unsupported: [{ start: 20, end: 23, text: '38%', kind: 'percent', value: 38 }]
    });
    expect(event).toMatchObject({
      citations: [
        { call_id: 'call_1', artifact_id: null, row: null, column: null, derived: null },
        { call_id: null, derived: { operation: 'difference', of: [0, 2] } }
      ],
      unsupported: [{ text: '38%', value: 38 }]
    });
    expect(parseEvent(end)).toMatchObject({ citations: [], unsupported: [] });
  });

  it('leaves out a receipt it cannot read, and keeps the turn’s end and the other receipts', () => {
    const good = { start: 0, end: 4, text: '21.9', kind: 'number', value: 21.9, call_id: 'c' };
    const event = parseEvent({
      ...end,
      citations: [
        { ...good, start: '0' },
        { ...good, kind: 'feeling' },
        { ...good, value: { nested: true } },
        { ...good, derived: { operation: 'guess', of: [0, 1] } },
        'not a citation',
        good
      ],
      unsupported: [{ start: 1, end: 2, text: 'x', kind: 'number' }]
    });
    expect(event).toMatchObject({ status: 'completed', citations: [good], unsupported: [] });
    // A list that is not one is still refused, as any field of the wrong kind.
    expect(parseEvent({ ...end, citations: 'none' })).toBeNull();
  });
});
