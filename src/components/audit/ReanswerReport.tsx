import * as React from 'react';

import type { IClaimCheck, IReanswerReport, IReansweredAnswer } from '../../transport/api';
import { Markdown } from '../Markdown';
import { MARK_INDEX, placeReceipts, RECEIPT } from '../receipts/markAnswer';

/** How each claim's status reads. */
const STATUS_WORDS: Record<IClaimCheck['status'], string> = {
  changed: 'changed',
  unchanged: 'unchanged',
  gone: 'gone today',
  not_rechecked: 'not re-checked'
};

/** The re-answer in a sentence: whether today's data changes the answer, and the counts. */
export function reanswerSummary(reanswer: IReanswerReport): string {
  const { changed = 0, unchanged = 0, gone = 0, not_rechecked: unchecked = 0 } = reanswer.counts;
  const parts = [`${changed} changed`, `${unchanged} unchanged`];
  if (gone) {
    parts.push(`${gone} gone`);
  }
  if (unchecked) {
    parts.push(`${unchecked} not re-checked`);
  }
  const head =
    changed || gone ? 'Today’s data changes the answer' : 'Today’s data gives the same numbers';
  return `${head}: ${parts.join(', ')}`;
}

/** Where a claim's value comes from: its cell (rows counted from 1), or how it is derived. */
function whereOf(claim: IClaimCheck): string | null {
  if (claim.derived) {
    return `derived: ${claim.derived.replace(/_/g, ' ')}`;
  }
  if (claim.row !== null && claim.row !== undefined && claim.column) {
    return `row ${claim.row + 1}, column ${claim.column}`;
  }
  return null;
}

/** What a claim's line says to assistive tech, in one phrase. */
export function claimLabel(claim: IClaimCheck): string {
  const where = whereOf(claim);
  const said =
    claim.status === 'changed'
      ? `${claim.text} changed to ${claim.new_text}`
      : `${claim.text}: ${STATUS_WORDS[claim.status]}`;
  return where ? `${said} (${where})` : said;
}

/** One cited number, then and now: `45.0 → 47.0 changed`. */
function ClaimLine({ claim }: { claim: IClaimCheck }): JSX.Element {
  const where = whereOf(claim);
  return (
    <li
      className="jp-AnalystReanswer-claim"
      data-status={claim.status}
      aria-label={claimLabel(claim)}
    >
      <span className="jp-AnalystReanswer-values">
        {claim.status === 'changed' ? (
          <>
            <del className="jp-AnalystReanswer-old">{claim.text}</del>
            <span className="jp-AnalystReanswer-arrow" aria-hidden="true">
              {' → '}
            </span>
            <ins className="jp-AnalystReanswer-new">{claim.new_text}</ins>
          </>
        ) : (
          <span className="jp-AnalystReanswer-same">{claim.text}</span>
        )}
      </span>{' '}
      <span className={`jp-AnalystReanswer-status jp-mod-${claim.status}`}>
        {claim.status === 'gone' ? '⚠️ ' : ''}
        {STATUS_WORDS[claim.status]}
      </span>
      {where && <span className="jp-AnalystReanswer-where"> · {where}</span>}
      {claim.note && <div className="jp-AnalystReanswer-note">{claim.note}</div>}
    </li>
  );
}

/** A changed number in the restated answer's `marked` text: `new (was old)`. */
export interface IChangedMark {
  start: number;
  text: string;
  claim: IClaimCheck;
}

/**
 * Where each changed number stands in `answer.marked`, in order: the server writes each as
 * `new (was old)` at its claim's place in `answer.answer`, the ones before it grown by
 * their "(was ...)". A place that does not say so is left unmarked.
 */
export function changedMarks(answer: IReansweredAnswer): IChangedMark[] {
  const changed = answer.claims
    .filter(c => c.status === 'changed' && Number.isInteger(c.start) && Number.isInteger(c.end))
    .sort((a, b) => (a.start as number) - (b.start as number));
  const out: IChangedMark[] = [];
  let shift = 0;
  for (const claim of changed) {
    const text = `${claim.new_text} (was ${claim.text})`;
    const start = (claim.start as number) + shift;
    if (answer.marked.slice(start, start + text.length) === text) {
      out.push({ start, text, claim });
    }
    shift += text.length - claim.new_text.length;
  }
  return out;
}

/** A changed number's highlight in the rendered answer (its words say old and new). */
function changedElement(doc: Document, _mark: IChangedMark, index: number): HTMLElement {
  const element = doc.createElement('mark');
  element.className = 'jp-AnalystReanswer-changed';
  element.setAttribute(RECEIPT, 'changed');
  element.setAttribute(MARK_INDEX, String(index));
  return element;
}

/** The restated answer's markdown, each changed number highlighted where it stands. */
function RestatedText({ answer }: { answer: IReansweredAnswer }): JSX.Element {
  const marks = React.useMemo(() => changedMarks(answer), [answer]);
  const onRendered = React.useCallback(
    (node: HTMLElement) => void placeReceipts(node, answer.marked, marks, changedElement),
    [answer, marks]
  );
  return (
    <Markdown
      text={answer.marked}
      className="jp-AnalystReanswer-markdown"
      onRendered={onRendered}
    />
  );
}

/** One answer restated: its text with each changed number `new (was old)`, and its claims. */
function RestatedAnswer({
  answer,
  title
}: {
  answer: IReansweredAnswer;
  title: string;
}): JSX.Element {
  return (
    <section className="jp-AnalystReanswer-answer" aria-label={title}>
      <div className="jp-AnalystReanswer-text" role="group" aria-label={`${title}: its text`}>
        <RestatedText answer={answer} />
      </div>
      {answer.claims.length > 0 && (
        <ul className="jp-AnalystReanswer-claims" aria-label="Cited numbers, then and now">
          {answer.claims.map((claim, i) => (
            <ClaimLine key={i} claim={claim} />
          ))}
        </ul>
      )}
    </section>
  );
}

export interface IReanswerReportProps {
  reanswer: IReanswerReport;
  /** Opens a path of the user's folder (the re-answered notebook) in a tab. */
  onOpen: (path: string) => void;
}

/**
 * The thread's answers restated on today's data: whether the data changes them, each answer
 * with its changed numbers written `new (was old)`, each cited number then and now (old →
 * new), what was not re-checked, and the re-answered notebook in the user's folder.
 */
export function ReanswerReport({ reanswer, onOpen }: IReanswerReportProps): JSX.Element {
  const changes = (reanswer.counts.changed ?? 0) + (reanswer.counts.gone ?? 0);
  const many = reanswer.answers.length > 1;
  return (
    <div className="jp-AnalystReanswer" role="region" aria-label="Re-answer on today’s data">
      <p className={`jp-AnalystReanswer-summary jp-mod-${changes ? 'changed' : 'same'}`}>
        {reanswerSummary(reanswer)}{' '}
        <span className="jp-AnalystReanswer-source">(re-run on {reanswer.source})</span>
      </p>
      {reanswer.answers.map((answer, i) => (
        <RestatedAnswer
          key={i}
          answer={answer}
          title={many ? `Answer ${i + 1} on today’s data` : 'The answer on today’s data'}
        />
      ))}
      <p className="jp-AnalystReanswer-caveat">
        The text around the cited numbers is as the model wrote it: not re-checked.
      </p>
      {reanswer.output ? (
        <p className="jp-AnalystReanswer-output">
          Written to{' '}
          <a
            href="#"
            className="jp-AnalystReanswer-path"
            aria-label={`Open the re-answered notebook ${reanswer.output}`}
            onClick={event => {
              event.preventDefault();
              onOpen(reanswer.output!);
            }}
          >
            {reanswer.output}
          </a>
        </p>
      ) : (
        reanswer.output_refused && (
          <p className="jp-AnalystReanswer-output">
            The re-answered notebook was not written: {reanswer.output_refused}
          </p>
        )
      )}
    </div>
  );
}
