import * as React from 'react';

import type { ToolCard } from '../../model';
import { ReusedBadge, StatusBadge } from './Badges';

/** The names of the tools, as a card's title says them. */
const TOOL_LABEL: Record<string, string> = {
  run_sql: 'SQL',
  run_python: 'Python',
  list_tables: 'Tables',
  describe_table: 'Table description',
  list_artifacts: 'Artifacts',
  find: 'Search',
  clarify: 'Question',
  read_cells: 'Notebook cells',
  plan: 'Plan'
};

export function toolLabel(tool: string): string {
  return TOOL_LABEL[tool] ?? (tool || 'Step');
}

function seconds(duration: number | null): string | null {
  if (duration === null || duration <= 0) {
    return null;
  }
  return duration < 1 ? `${Math.round(duration * 1000)} ms` : `${duration.toFixed(1)} s`;
}

/** A tool card's title line: the tool, what it names, its state, reused, how long it ran. */
export function CardHeader({ card, subject }: { card: ToolCard; subject?: string }): JSX.Element {
  const took = seconds(card.durationS);
  return (
    <div className="jp-AnalystCard-header">
      <span className="jp-AnalystCard-tool">{toolLabel(card.tool)}</span>
      {subject && <code className="jp-AnalystCard-subject">{subject}</code>}
      <span className="jp-AnalystCard-spacer" />
      {card.reused && <ReusedBadge />}
      {took && <span className="jp-AnalystCard-duration">{took}</span>}
      <StatusBadge status={card.status} />
    </div>
  );
}
