import * as React from 'react';

import { RUN_PYTHON, type RunPythonView } from '../../model';
import { cardArtifacts } from '../cards/cardArtifacts';
import { StepArtifacts } from '../cards/StepArtifacts';
import { StepProgress } from '../cards/StepProgress';
import { ToolCardFrame } from '../cards/ToolCardFrame';
import { ToolError } from '../cards/ToolError';
import { StepActions } from '../StepActions';
import { Printed } from '../WideBlock';
import { toolCard, type IToolCardProps } from './card';

/** A Python step: its code (highlighted, collapsible), what it printed, its errors, its charts and files. */
export function PythonCard({
  card,
  detail,
  view,
  threadId,
  context
}: IToolCardProps<RunPythonView>): JSX.Element {
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
      {detail?.result && <Printed className="jp-AnalystCard-value" text={detail.result} />}
      {card.result?.error && <ToolError error={card.result.error} />}
      {detail?.files_not_stored?.map(f => (
        <div key={f.path} className="jp-AnalystCard-note">
          {f.path} was not stored: {f.reason}
        </div>
      ))}
      <StepArtifacts artifacts={cardArtifacts(card, view)} />
      <StepActions threadId={threadId} callId={card.callId} tool={card.tool} status={card.status} />
    </ToolCardFrame>
  );
}

export const RUN_PYTHON_CARD = toolCard(RUN_PYTHON, PythonCard);
