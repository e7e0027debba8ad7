import * as React from 'react';

import { isRefusal, toolModel, type ToolCard } from '../../model';
import { ReusedBadge, StatusBadge } from './Badges';
import { InfoTip } from './InfoTip';

/** A tool's name as a card's title says it (its model's label). */
export function toolLabel(tool: string): string {
  return toolModel(tool)?.label ?? (tool || 'Step');
}

function seconds(duration: number | null): string | null {
  if (duration === null || duration <= 0) {
    return null;
  }
  return duration < 1 ? `${Math.round(duration * 1000)} ms` : `${duration.toFixed(1)} s`;
}

export interface ICardHeaderProps {
  card: ToolCard;
  /** What the step is about: a dataset's name, its code's first comment. */
  subject?: string;
  /** The step's number in its turn. */
  step?: number;
  /** The size of the prompt of the model call that asked for the step, behind an ⓘ. */
  context?: string;
}

/**
 * A tool card's title line: the step's number and tool, what it is about, how long it ran
 * and its state; a step reused as a whole says "reused" alone (it did not run: no "Done"),
 * a query the guard refused "Refused" (it did not run either: not "Failed").
 */
export function CardHeader({ card, subject, step, context }: ICardHeaderProps): JSX.Element {
  const took = seconds(card.durationS);
  const reused = card.reused && card.status === 'ok';
  const status =
    card.status === 'error' && isRefusal(card.result?.error?.reason) ? 'refused' : card.status;
  return (
    <div className="jp-AnalystCard-header">
      <span className="jp-AnalystCard-tool">
        {step !== undefined && <span className="jp-AnalystCard-step">Step {step} · </span>}
        {toolLabel(card.tool)}
      </span>
      {subject && <span className="jp-AnalystCard-subject">{subject}</span>}
      <span className="jp-AnalystCard-spacer" />
      {took && <span className="jp-AnalystCard-duration">{took}</span>}
      {reused ? <ReusedBadge /> : <StatusBadge status={status} />}
      {context && <InfoTip label="Size of the prompt that asked for this step" text={context} />}
    </div>
  );
}
