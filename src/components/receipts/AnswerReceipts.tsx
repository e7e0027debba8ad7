import * as React from 'react';

import { answerMarks, type Citation, type UnsupportedClaim } from '../../model';
import { Markdown } from '../Markdown';
import { useCitedFocus, type ICitedCell } from './citedFocus';
import { MARK_INDEX, placeReceipts, RECEIPT } from './markAnswer';
import { shownMarks, type IReceiptStep, type ShownMark } from './receiptWords';

/** An answer's receipts, as the turn's end gives them, and the thread's steps they name. */
export interface IAnswerReceipts {
  /** The answer's text the spans' offsets index (the turn's answer). */
  answer: string;
  citations: Citation[];
  unsupported: UnsupportedClaim[];
  steps: ReadonlyMap<string, IReceiptStep>;
  /** The answer's turn in the thread, from 1. */
  turn: number;
}

/** The cell of its step's table a citation points at, if it names a table. */
function cellOf(citation: Citation): ICitedCell[] {
  return citation.artifact_id
    ? [{ artifactId: citation.artifact_id, row: citation.row, column: citation.column }]
    : [];
}

/** "Receipts: 2 numbers from their steps, 1 derived · 1 no step shows", or null for none. */
export function receiptsSummary(marks: readonly ShownMark[]): string | null {
  const count = (kind: ShownMark['kind']): number => marks.filter(m => m.kind === kind).length;
  const cited = count('cited');
  const derived = count('derived');
  const unsupported = count('unsupported');
  const traced = [
    cited > 0 ? `${cited} from ${cited === 1 ? 'its step' : 'their steps'}` : '',
    derived > 0 ? `${derived} derived` : ''
  ].filter(Boolean);
  const parts = [traced.join(', '), unsupported > 0 ? `${unsupported} no step shows` : ''].filter(
    Boolean
  );
  return parts.length ? `Receipts: ${parts.join(' · ')}` : null;
}

/** The placed mark `target` is in, inside `frame`, and its index. */
function markAt(
  target: EventTarget | null,
  frame: HTMLElement | null
): [HTMLElement, number] | null {
  if (!(target instanceof Element) || frame === null) {
    return null;
  }
  const mark = target.closest<HTMLElement>(`[${RECEIPT}]`);
  if (mark === null || !frame.contains(mark)) {
    return null;
  }
  const index = Number(mark.getAttribute(MARK_INDEX));
  return Number.isInteger(index) ? [mark, index] : null;
}

export interface IAnswerBodyProps {
  /** The text shown (the streamed answer, or the answer itself). */
  text: string;
  receipts: IAnswerReceipts | null;
  className?: string;
}

/**
 * The answer's markdown with its receipts: each cited number a link (its step and cell on
 * hover and focus; a click brings the step's card into view and marks the cell in its
 * table), a derived one saying what it follows from, an unsupported one marked as such.
 * The marks go on the rendered markdown (markAnswer.ts); a span that cannot be placed
 * stays plain text. Without receipts, it is the markdown alone.
 */
export function AnswerBody({ text, receipts, className }: IAnswerBodyProps): JSX.Element {
  const { show } = useCitedFocus();
  const marks = React.useMemo(
    () =>
      receipts === null
        ? []
        : shownMarks(
            answerMarks(receipts.answer, receipts.citations, receipts.unsupported),
            receipts.citations,
            receipts.steps,
            receipts.turn
          ),
    [receipts]
  );
  const source = receipts?.answer ?? text;
  const frame = React.useRef<HTMLDivElement>(null);
  const rendered = React.useRef<HTMLElement | null>(null);
  const latest = React.useRef({ source, marks });
  latest.current = { source, marks };
  const [tip, setTip] = React.useState<{ index: number; top: number } | null>(null);

  const onRendered = React.useCallback((node: HTMLElement) => {
    rendered.current = node;
    placeReceipts(node, latest.current.source, latest.current.marks);
  }, []);
  // Receipts arrive with the turn's end, after the answer was rendered: marked then.
  React.useEffect(() => {
    if (rendered.current !== null && rendered.current.isConnected) {
      placeReceipts(rendered.current, source, marks);
    }
    setTip(null);
  }, [source, marks]);

  const showTip = (target: EventTarget | null): void => {
    const found = markAt(target, frame.current);
    if (found === null || frame.current === null) {
      return;
    }
    const [mark, index] = found;
    const top = mark.getBoundingClientRect().bottom - frame.current.getBoundingClientRect().top;
    setTip({ index, top: top + 2 });
  };
  const hideTip = (event: React.FocusEvent | React.MouseEvent): void => {
    const found = markAt(event.target, frame.current);
    if (found !== null && !found[0].contains(event.relatedTarget as Node | null)) {
      setTip(null);
    }
  };
  const follow = (event: React.MouseEvent): void => {
    const found = markAt(event.target, frame.current);
    if (found === null) {
      return;
    }
    event.preventDefault();
    const mark = marks[found[1]];
    if (mark?.kind === 'cited') {
      show({ callIds: [mark.callId], cells: cellOf(mark.citation) });
    } else if (mark?.kind === 'derived') {
      const [a, b] = mark.from;
      show({
        callIds: [a.call_id, b.call_id].filter((id): id is string => id !== null),
        cells: [...cellOf(a), ...cellOf(b)]
      });
    }
  };

  // One structure with receipts or without: the streamed answer is not rendered again when
  // its turn's end brings them (no jump), only marked.
  const shown = tip === null ? undefined : marks[tip.index];
  const summary = receiptsSummary(marks);
  return (
    <div
      className="jp-AnalystReceipts"
      ref={frame}
      onClick={follow}
      onMouseOver={event => showTip(event.target)}
      onMouseOut={hideTip}
      onFocus={event => showTip(event.target)}
      onBlur={hideTip}
      onKeyDown={event => {
        if (event.key === 'Escape') {
          setTip(null);
        }
      }}
    >
      <Markdown text={text} className={className} onRendered={onRendered} />
      {shown !== undefined && tip !== null && (
        // The marks carry the same words as their accessible names: this is for the eye.
        <div
          className={`jp-AnalystReceipt-tip jp-AnalystReceipt-tip-${shown.kind}`}
          style={{ top: tip.top }}
          aria-hidden="true"
        >
          {shown.lines.map((line, i) => (
            <div key={i}>{line}</div>
          ))}
        </div>
      )}
      {summary !== null && <div className="jp-AnalystReceipts-summary">{summary}</div>}
    </div>
  );
}
