import * as React from 'react';

import type { ToolCard } from '../../model';
import { Code } from '../Markdown';
import { CardHeader } from './CardHeader';
import { GuardNote } from './GuardNote';

export interface IToolCardFrameProps {
  /** The card's kind (`data-card`). */
  kind: string;
  /** Its class, `jp-AnalystCard-<variant>` (default: the kind). */
  variant?: string;
  card: ToolCard;
  /** What a screen reader calls the card. */
  label?: string;
  /** Hover text: the size of the prompt of the model call that asked for the step. */
  title?: string;
  /** What the step is about, shown in its header (a dataset's name). */
  subject?: string;
  /** The step's code, shown highlighted and collapsible. */
  code?: { text: string; language: string; summary: string };
  children?: React.ReactNode;
}

/** What every tool call's card has: its state for tests and styles, its header, the guards
 * that concern it, and its code; the card's own parts follow. */
export function ToolCardFrame({
  kind,
  variant,
  card,
  label,
  title,
  subject,
  code,
  children
}: IToolCardFrameProps): JSX.Element {
  return (
    <section
      className={`jp-AnalystCard jp-AnalystCard-${variant ?? kind}`}
      data-card={kind}
      data-tool={card.tool}
      data-call-id={card.callId}
      data-status={card.status}
      data-reused={card.reused ? 'true' : 'false'}
      aria-label={label}
      title={title}
    >
      <CardHeader card={card} subject={subject} />
      {card.guards.map(g => (
        <GuardNote key={g.seq} notice={g} />
      ))}
      {code && (
        <details className="jp-AnalystCard-code" open>
          <summary>{code.summary}</summary>
          <Code code={code.text} language={code.language} />
        </details>
      )}
      {children}
    </section>
  );
}
