import * as React from 'react';

import { Code } from '../Markdown';
import { StepActions } from '../StepActions';
import { CardHeader } from './CardHeader';
import { cardArtifacts } from './cardArtifacts';
import { GuardNote } from './GuardNote';
import type { IStepCardProps } from './SqlCard';
import { StepArtifacts } from './StepArtifacts';
import { ToolError } from './ToolError';

/** A Python step: its code (highlighted, collapsible), what it printed, its errors, its charts and files. */
export function PythonCard({ card, view, threadId, title }: IStepCardProps): JSX.Element {
  const detail = card.result?.detail.kind === 'python' ? card.result.detail : null;
  return (
    <section
      className="jp-AnalystCard jp-AnalystCard-python"
      data-card="python"
      data-call-id={card.callId}
      data-status={card.status}
      data-reused={card.reused ? 'true' : 'false'}
      aria-label="Python step"
      title={title}
    >
      <CardHeader card={card} />
      {card.guards.map(g => (
        <GuardNote key={g.seq} notice={g} />
      ))}
      {card.code !== undefined && (
        <details className="jp-AnalystCard-code" open>
          <summary>Code</summary>
          <Code code={card.code} language="python" />
        </details>
      )}
      {detail?.stdout && (
        <pre className="jp-AnalystCard-stdout" aria-label="Output">
          {detail.stdout}
        </pre>
      )}
      {detail?.stderr && (
        <pre className="jp-AnalystCard-stderr" aria-label="Errors printed">
          {detail.stderr}
        </pre>
      )}
      {detail?.value && <pre className="jp-AnalystCard-value">{detail.value}</pre>}
      {card.result?.error && <ToolError error={card.result.error} />}
      {detail?.filesNotStored.map(f => (
        <div key={f.path} className="jp-AnalystCard-note">
          {f.path} was not stored: {f.reason}
        </div>
      ))}
      <StepArtifacts artifacts={cardArtifacts(card, view)} />
      <StepActions threadId={threadId} callId={card.callId} tool={card.tool} />
    </section>
  );
}
