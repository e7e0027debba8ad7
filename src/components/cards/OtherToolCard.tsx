import * as React from 'react';

import type { ResultDetail, ToolCard } from '../../model';
import { CardHeader } from './CardHeader';
import { GuardNote } from './GuardNote';
import { ToolError } from './ToolError';

/** One line on what a lookup step found. */
function summary(detail: ResultDetail): string | null {
  switch (detail.kind) {
    case 'tables':
      return detail.tables.map(t => (t.rows === undefined ? t.name : `${t.name} (${t.rows.toLocaleString('en-US')} rows)`)).join(', ');
    case 'describe':
      return `${detail.name ?? ''}: ${detail.columns.map(c => c.name).join(', ')}`;
    case 'artifacts':
      return detail.artifacts.map(a => a.name).join(', ') || 'no artifacts yet';
    case 'find':
      return detail.matches.map(m => m.name).join(', ') || detail.note || 'nothing found';
    case 'clarify':
      return detail.text ?? detail.question ?? null;
    default:
      return null;
  }
}

/** A step that looks things up (tables, a description, a search) or asks the user. */
export function OtherToolCard({ card, title }: { card: ToolCard; title?: string }): JSX.Element {
  const line = card.result ? summary(card.result.detail) : null;
  return (
    <section
      className="jp-AnalystCard jp-AnalystCard-other"
      data-card="tool"
      data-tool={card.tool}
      data-call-id={card.callId}
      data-status={card.status}
      data-reused={card.reused ? 'true' : 'false'}
      title={title}
    >
      <CardHeader card={card} />
      {card.guards.map(g => (
        <GuardNote key={g.seq} notice={g} />
      ))}
      {line && <div className="jp-AnalystCard-summary">{line}</div>}
      {card.result?.error && <ToolError error={card.result.error} />}
    </section>
  );
}
