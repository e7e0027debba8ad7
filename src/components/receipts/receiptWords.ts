/**
 * What an answer's receipts say to the person reading it: which step shows a cited number
 * (by its number and name, never its call id), which row and column of its table, how a
 * derived number follows from two cited ones, that no step shows an unsupported one. Pure:
 * the answer card (AnswerReceipts.tsx) shows these words on its marks.
 */

import { spanOf, type Citation, type ReceiptMark, type TurnView } from '../../model';
import { toolLabel } from '../cards/CardHeader';
import { stepNumbers, stepPurpose } from '../cards/stepNames';

/** A step of the thread as a receipt names it. */
export interface IReceiptStep {
  /** Its number in its turn, from 1. */
  step: number;
  /** Its turn's number in the thread, from 1. */
  turn: number;
  /** Its tool as its card's title says it ("SQL"). */
  tool: string;
  /** What it is about (a dataset's name, its code's first comment), if it says. */
  name: string | null;
}

/** The steps of a thread's turns, by call id. */
export function receiptSteps(turns: readonly TurnView[]): ReadonlyMap<string, IReceiptStep> {
  const out = new Map<string, IReceiptStep>();
  turns.forEach((turn, t) => {
    const numbers = stepNumbers(turn);
    for (const item of turn.items) {
      const step = item.kind === 'tool' ? numbers.get(item.callId) : undefined;
      if (item.kind === 'tool' && step !== undefined && !out.has(item.callId)) {
        out.set(item.callId, {
          step,
          turn: t + 1,
          tool: toolLabel(item.tool),
          name: stepPurpose(item) ?? item.datasetName ?? null
        });
      }
    }
  });
  return out;
}

/** A mark as the answer shows it: what it is, and its words. */
export type ShownMark =
  | {
      kind: 'cited';
      start: number;
      text: string;
      /** The step whose card a click shows. */
      callId: string;
      citation: Citation;
      label: string;
      lines: string[];
    }
  | {
      kind: 'derived';
      start: number;
      text: string;
      /** The cited numbers it follows from (a click shows their steps). */
      from: [Citation, Citation];
      label: string;
      lines: string[];
    }
  | { kind: 'unsupported'; start: number; text: string; label: string; lines: string[] };

/** "step 2 'revenue_by_region'", "step 1 of question 3" for a step of another turn. */
export function stepWords(step: IReceiptStep, turn: number): string {
  const where =
    step.turn === turn ? `step ${step.step}` : `step ${step.step} of question ${step.turn}`;
  return step.name ? `${where} '${step.name}'` : where;
}

/** "row 4, column revenue": where in the step's table (rows counted from 1, as people count). */
export function cellWords(citation: Citation): string {
  const parts: string[] = [];
  if (citation.row !== null && citation.row >= 0) {
    parts.push(`row ${citation.row + 1}`);
  }
  if (citation.column) {
    parts.push(`column ${citation.column}`);
  }
  return parts.join(', ');
}

/** How a derived number follows from `a` and `b`, as `of` orders them. */
export function derivationWords(operation: string, a: string, b: string): string {
  switch (operation) {
    case 'difference':
      return `difference of ${a} and ${b}`;
    case 'sum':
      return `sum of ${a} and ${b}`;
    case 'ratio':
      return `ratio of ${a} to ${b}`;
    case 'percent_change':
      return `change from ${b} to ${a}`;
    case 'share':
      return `share of ${a} in ${b}`;
    default:
      return `${operation.replace(/_/g, ' ')} of ${a} and ${b}`;
  }
}

/**
 * The value a citation's result holds, when the answer wrote another number ("21.9" for
 * 21.92, "1.6k" for 1620); null when only the writing differs ("1,620" for 1620), and for a
 * name or a date.
 */
export function valueWords(citation: Citation): string | null {
  if (typeof citation.value !== 'number') {
    return null;
  }
  const written = Number(citation.text.replace(/[,\s$€£]/g, ''));
  return written === citation.value ? null : `the result holds ${citation.value}`;
}

/**
 * The marks of an answer as it shows them: a citation of a step of the thread, a number
 * derived from two of those, an unsupported claim. A citation of a step the thread does not
 * show (an unknown call id), or a derivation from citations that are not there, is left
 * out: the number stays plain text rather than a link to nowhere.
 */
export function shownMarks(
  marks: readonly ReceiptMark[],
  citations: readonly Citation[],
  steps: ReadonlyMap<string, IReceiptStep>,
  turn: number
): ShownMark[] {
  const out: ShownMark[] = [];
  const known = (c: Citation | undefined): c is Citation & { call_id: string } =>
    c !== undefined && c.call_id !== null && steps.has(c.call_id);
  for (const mark of marks) {
    const { start, text } = spanOf(mark);
    if (mark.kind === 'unsupported') {
      const what = mark.claim.kind === 'date' || mark.claim.kind === 'month' ? 'date' : 'number';
      out.push({
        kind: 'unsupported',
        start,
        text,
        label: `${text} — no step shows this ${what}`,
        lines: [`No step shows this ${what}`, 'The model wrote it; no result of the thread has it.']
      });
      continue;
    }
    const citation = mark.citation;
    const derived = citation.derived;
    if (derived !== null && derived !== undefined && !Array.isArray(derived.of)) {
      // Computed from cells of one result the answer does not cite: a click shows that step.
      const cells = derived.cells ?? [];
      const step = cells.length > 0 ? steps.get(cells[0].call_id) : undefined;
      if (step === undefined) {
        continue;
      }
      const rows = [...new Set(cells.map(c => c.row + 1))];
      const words =
        `${derived.operation.replace(/_/g, ' ')} of column ` +
        `${[...new Set(cells.map(c => c.column))].join(', ')}, ` +
        `${rows.length === 1 ? 'row' : 'rows'} ${rows.join(', ')}`;
      out.push({
        kind: 'cited',
        start,
        text,
        callId: cells[0].call_id,
        citation,
        label: `${text} — derived: ${words} of ${stepWords(step, turn)}`,
        lines: [`Derived: ${words}`, `of ${stepWords(step, turn)}`]
      });
      continue;
    }
    if (derived !== null && derived !== undefined && Array.isArray(derived.of)) {
      const [a, b] = derived.of.map(i => citations[i]);
      if (derived.of.length !== 2 || derived.of.includes(mark.index) || !known(a) || !known(b)) {
        continue;
      }
      const words = derivationWords(derived.operation, a.text, b.text);
      out.push({
        kind: 'derived',
        start,
        text,
        from: [a, b],
        label: `${text} — derived: ${words}`,
        lines: [
          `Derived: ${words}`,
          `${a.text}: ${stepWords(steps.get(a.call_id) as IReceiptStep, turn)}; ` +
            `${b.text}: ${stepWords(steps.get(b.call_id) as IReceiptStep, turn)}`
        ]
      });
      continue;
    }
    if (!known(citation)) {
      continue;
    }
    const step = steps.get(citation.call_id) as IReceiptStep;
    const cell = cellWords(citation);
    const value = valueWords(citation);
    out.push({
      kind: 'cited',
      start,
      text,
      callId: citation.call_id,
      citation,
      label: `${text} — from ${stepWords(step, turn)}${cell ? `, ${cell}` : ''}`,
      lines: [
        `Step ${step.step}${step.turn === turn ? '' : ` of question ${step.turn}`} · ${step.tool}` +
          (step.name ? ` · ${step.name}` : ''),
        ...(cell ? [cell[0].toUpperCase() + cell.slice(1)] : []),
        ...(value ? [value] : [])
      ]
    });
  }
  return out;
}
