import * as React from 'react';

import type { ToolCard } from '../../model';
import { Code } from '../Markdown';
import { revealCard, useCitedFocus } from '../receipts/citedFocus';
import { CardHeader, toolLabel } from './CardHeader';
import { Details, type DetailEntry, useStepNumbers } from './Details';
import { GuardNote } from './GuardNote';
import { shownGuards, stepPurpose } from './stepNames';

export interface IToolCardFrameProps {
  /** The card's kind (`data-card`). */
  kind: string;
  /** Its class, `jp-AnalystCard-<variant>` (default: the kind). */
  variant?: string;
  card: ToolCard;
  /** What a screen reader calls the card (default: its tool's name, "Tables step"). */
  label?: string;
  /** The size of the prompt of the model call that asked for the step (its header's ⓘ). */
  context?: string;
  /** What the step is about, shown in its header (default: its dataset, its code's comment). */
  subject?: string;
  /** The step's code, shown highlighted and collapsible. */
  code?: { text: string; language: string; summary: string };
  /** More facts for the card's details, after its ids. */
  details?: DetailEntry[];
  children?: React.ReactNode;
}

/**
 * What every tool call's card has: its state for tests and styles, its header, the guards
 * that concern it (not those its error says again), its code, and its ids behind details;
 * the card's own parts follow the code. Its header folds it; a step reused as a whole comes
 * folded to that one line (nothing of it ran again), opened on demand.
 */
export function ToolCardFrame({
  kind,
  variant,
  card,
  label,
  context,
  subject,
  code,
  details = [],
  children
}: IToolCardFrameProps): JSX.Element {
  const step = useStepNumbers().get(card.callId);
  const collapsed = card.reused && card.status === 'ok';
  const { focus } = useCitedFocus();
  const cited = focus?.callIds.includes(card.callId) ?? false;
  const section = React.useRef<HTMLElement>(null);
  // After the cells of its table are marked (a child's render), the card a receipt leads to.
  React.useEffect(() => {
    if (focus !== null && focus.callIds[0] === card.callId && section.current !== null) {
      revealCard(section.current);
    }
  }, [focus, card.callId]);
  const header = (
    <CardHeader
      card={card}
      subject={subject ?? stepPurpose(card) ?? undefined}
      step={step}
      context={context}
    />
  );
  const body = (
    <div className="jp-AnalystCard-body">
      {shownGuards(card, card.result?.error).map(g => (
        <GuardNote key={g.seq} notice={g} />
      ))}
      {code && (
        <details className="jp-AnalystCard-code" open>
          <summary>{code.summary}</summary>
          <Code code={code.text} language={code.language} />
        </details>
      )}
      {children}
      <Details entries={[['Step id', card.callId], ['Step key', card.stepKey], ...details]} />
    </div>
  );
  return (
    <section
      ref={section}
      className={`jp-AnalystCard jp-AnalystCard-${variant ?? kind}${cited ? ' jp-mod-cited' : ''}`}
      data-card={kind}
      data-tool={card.tool}
      data-call-id={card.callId}
      data-status={card.status}
      data-reused={card.reused ? 'true' : 'false'}
      aria-label={label ?? `${toolLabel(card.tool)} step`}
    >
      {/* One structure whether folded or not: a card that turns out reused folds without its
          parts (a chart's renderer) being made again. */}
      <details
        className={`jp-AnalystCard-fold ${collapsed ? 'jp-AnalystCard-reusedStep' : ''}`.trim()}
        open={!collapsed}
      >
        <summary>{header}</summary>
        {body}
      </details>
    </section>
  );
}
