import * as React from 'react';

import { StepActions } from '../StepActions';
import { Printed } from '../WideBlock';
import { cardArtifacts } from './cardArtifacts';
import type { IStepCardProps } from './SqlCard';
import { StepArtifacts } from './StepArtifacts';
import { StepProgress } from './StepProgress';
import { ToolCardFrame } from './ToolCardFrame';
import { ToolError } from './ToolError';

/** A Python step: its code (highlighted, collapsible), what it printed, its errors, its charts and files. */
export function PythonCard({ card, view, threadId, context }: IStepCardProps): JSX.Element {
  const detail = card.result?.detail.kind === 'python' ? card.result.detail : null;
  return (
    <ToolCardFrame
      kind="python"
      card={card}
      label="Python step"
      context={context}
      code={
        card.code !== undefined
          ? { text: card.code, language: 'python', summary: 'Code' }
          : undefined
      }
    >
      <StepProgress card={card} />
      {detail?.stdout && (
        <Printed className="jp-AnalystCard-stdout" label="Output" text={detail.stdout} />
      )}
      {detail?.stderr && (
        <Printed className="jp-AnalystCard-stderr" label="Errors printed" text={detail.stderr} />
      )}
      {detail?.value && <Printed className="jp-AnalystCard-value" text={detail.value} />}
      {card.result?.error && <ToolError error={card.result.error} />}
      {detail?.filesNotStored.map(f => (
        <div key={f.path} className="jp-AnalystCard-note">
          {f.path} was not stored: {f.reason}
        </div>
      ))}
      <StepArtifacts artifacts={cardArtifacts(card, view)} />
      <StepActions threadId={threadId} callId={card.callId} tool={card.tool} status={card.status} />
    </ToolCardFrame>
  );
}
