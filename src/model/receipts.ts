/**
 * An answer's receipts as the panel marks them: each span of the final answer the server
 * cited or found unsupported (the `turn_ended` event's `citations` and `unsupported`),
 * checked against the answer's text before anything is marked. Pure: the answer card
 * (components/receipts) places these marks on the rendered markdown.
 *
 * A span is kept only when it is where it says it is: whole-number offsets inside the
 * answer, the answer's text there equal to the span's text, and clear of every span before
 * it. Anything else is left out, so the answer shows as written rather than marked wrong.
 */

import type { Citation, UnsupportedClaim } from './events';

/** A span of the answer shown with its receipt. */
export type ReceiptMark =
  | {
      kind: 'cited';
      citation: Citation;
      /** Its index in the event's `citations` (what a derivation's `of` names). */
      index: number;
    }
  | { kind: 'unsupported'; claim: UnsupportedClaim };

/** The span a mark is on (its citation's or its claim's). */
export function spanOf(mark: ReceiptMark): Citation | UnsupportedClaim {
  return mark.kind === 'cited' ? mark.citation : mark.claim;
}

/** Whether the span `[start, end)` of `answer` is in range and says `text`. */
function fits(answer: string, start: unknown, end: unknown, text: unknown): boolean {
  return (
    Number.isInteger(start) &&
    Number.isInteger(end) &&
    typeof text === 'string' &&
    (start as number) >= 0 &&
    (start as number) < (end as number) &&
    (end as number) <= answer.length &&
    answer.slice(start as number, end as number) === text
  );
}

/**
 * The marks of `answer`, in its order: each citation and unsupported claim whose span fits
 * (see the module's comment). Of two that overlap, the one starting first is kept, and a
 * citation before an unsupported claim at the same place.
 *
 * >>> answerMarks('up 5', [], [{ start: 3, end: 4, text: '5', kind: 'number', value: 5 }])[0].kind
 * 'unsupported'
 */
export function answerMarks(
  answer: string,
  citations: readonly Citation[],
  unsupported: readonly UnsupportedClaim[]
): ReceiptMark[] {
  const candidates: ReceiptMark[] = [
    ...citations.map((citation, index): ReceiptMark => ({ kind: 'cited', citation, index })),
    ...unsupported.map((claim): ReceiptMark => ({ kind: 'unsupported', claim }))
  ].filter(mark => {
    const span = spanOf(mark);
    return fits(answer, span.start, span.end, span.text);
  });
  // Stable: at one start, citations (listed first) come before unsupported claims.
  candidates.sort((a, b) => spanOf(a).start - spanOf(b).start);
  const out: ReceiptMark[] = [];
  let end = 0;
  for (const mark of candidates) {
    const span = spanOf(mark);
    if (span.start >= end) {
      out.push(mark);
      end = span.end;
    }
  }
  return out;
}

/** Whether a letter or digit is at `at` of `text` (false past either end). */
function wordAt(text: string, at: number): boolean {
  return at >= 0 && at < text.length && /[\p{L}\p{N}]/u.test(text[at]);
}

/**
 * Whether `[start, end)` of `text` is a whole token: no letter or digit goes on either side
 * of it, nor a decimal point or thousands comma between digits (`21` in `21.9` or `1,620`).
 */
export function isWholeToken(text: string, start: number, end: number): boolean {
  if (wordAt(text, start - 1) || wordAt(text, end)) {
    return false;
  }
  const joinsBefore = /[.,]/.test(text[start - 1] ?? '') && /\d/.test(text[start - 2] ?? '');
  const joinsAfter = /[.,]/.test(text[end] ?? '') && /\d/.test(text[end + 1] ?? '');
  const digitBefore = /\d/.test(text[start] ?? '');
  const digitAfter = /\d/.test(text[end - 1] ?? '');
  return !(joinsBefore && digitBefore) && !(joinsAfter && digitAfter);
}

/** Where `token` stands in `text` as a whole token, each start in order. */
export function tokenStarts(text: string, token: string): number[] {
  const out: number[] = [];
  if (token === '') {
    return out;
  }
  for (let at = text.indexOf(token); at >= 0; at = text.indexOf(token, at + 1)) {
    if (isWholeToken(text, at, at + token.length)) {
      out.push(at);
    }
  }
  return out;
}

/**
 * Where each mark is in `rendered` (the text the answer's markdown shows): the same
 * occurrence of its text as in the answer's source (its third `21.9` is the rendered third
 * `21.9`), or null when that cannot be told, because the rendering shows the text a
 * different number of times than the source writes it (in a link's address, an escape, a
 * formula), or puts it before the mark placed ahead of it.
 *
 * >>> placeInRendered('**21.9** and 21.9', '21.9 and 21.9', [{ start: 13, text: '21.9' }])
 * [9]
 */
export function placeInRendered(
  source: string,
  rendered: string,
  marks: readonly { start: number; text: string }[]
): (number | null)[] {
  const inSource = new Map<string, number[]>();
  const inRendered = new Map<string, number[]>();
  const startsOf = (map: Map<string, number[]>, text: string, token: string): number[] => {
    let found = map.get(token);
    if (found === undefined) {
      found = tokenStarts(text, token);
      map.set(token, found);
    }
    return found;
  };
  let after = 0;
  return marks.map(mark => {
    const sourceStarts = startsOf(inSource, source, mark.text);
    const renderedStarts = startsOf(inRendered, rendered, mark.text);
    const nth = sourceStarts.indexOf(mark.start);
    if (nth < 0 || sourceStarts.length !== renderedStarts.length) {
      return null;
    }
    const at = renderedStarts[nth];
    if (at < after) {
      return null;
    }
    after = at + mark.text.length;
    return at;
  });
}
