import * as React from 'react';

import type { ToolCard } from '../../model';
import type { IToolCardProps, ToolCardComponent } from '../tools/card';
import { ToolCardFrame } from './ToolCardFrame';
import { ToolError } from './ToolError';

/**
 * A step that looks things up (tables, a description, a search) or asks the user, and the
 * card of a tool without one of its own: its title, a line on what it found, its error.
 */
export function OtherToolCard({
  card,
  context,
  line
}: {
  card: ToolCard;
  context?: string;
  /** One line on what the step found. */
  line?: string | null;
}): JSX.Element {
  return (
    <ToolCardFrame kind="tool" variant="other" card={card} context={context}>
      {line && <div className="jp-AnalystCard-summary">{line}</div>}
      {card.result?.error && <ToolError error={card.result.error} />}
    </ToolCardFrame>
  );
}

/** The card of a tool whose result says one line (`summary` of its view). */
export function summaryCard<View>(summary: (view: View) => string | null): ToolCardComponent<View> {
  return function SummaryCard({ card, detail, context }: IToolCardProps<View>): JSX.Element {
    return <OtherToolCard card={card} context={context} line={detail ? summary(detail) : null} />;
  };
}
