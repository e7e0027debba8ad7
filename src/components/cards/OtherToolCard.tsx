import * as React from 'react';

import type { ResultDetail, ToolCard } from '../../model';
import { ToolCardFrame } from './ToolCardFrame';
import { ToolError } from './ToolError';

/** One line on what a lookup step found. */
function summary(detail: ResultDetail): string | null {
  switch (detail.kind) {
    case 'tables':
      return detail.tables
        .map(t =>
          t.rows === undefined ? t.name : `${t.name} (${t.rows.toLocaleString('en-US')} rows)`
        )
        .join(', ');
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
export function OtherToolCard({
  card,
  context
}: {
  card: ToolCard;
  context?: string;
}): JSX.Element {
  const line = card.result ? summary(card.result.detail) : null;
  return (
    <ToolCardFrame kind="tool" variant="other" card={card} context={context}>
      {line && <div className="jp-AnalystCard-summary">{line}</div>}
      {card.result?.error && <ToolError error={card.result.error} />}
    </ToolCardFrame>
  );
}
