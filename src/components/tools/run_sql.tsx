import * as React from 'react';

import { RUN_SQL, type RunSqlView } from '../../model';
import { ArtifactPreview } from '../cards/ArtifactPreview';
import { cardArtifacts } from '../cards/cardArtifacts';
import { StepArtifacts } from '../cards/StepArtifacts';
import { StepProgress } from '../cards/StepProgress';
import { ToolCardFrame } from '../cards/ToolCardFrame';
import { ToolError } from '../cards/ToolError';
import { StepActions } from '../StepActions';
import { toolCard, type IToolCardProps } from './card';

/** "60 rows × 3 columns", and whether the row cap cut it. */
function shape(detail: RunSqlView): string {
  const rows =
    detail.rows === undefined
      ? ''
      : `${detail.rows.toLocaleString('en-US')} row${detail.rows === 1 ? '' : 's'}`;
  const cols = `${detail.columns.length} column${detail.columns.length === 1 ? '' : 's'}`;
  const cut = detail.truncated ? ' (cut at the row cap)' : '';
  return [rows, cols].filter(Boolean).join(' × ') + cut;
}

/** A SQL step: the query (highlighted, collapsible), its shape and columns, the table. */
export function SqlCard({
  card,
  detail,
  view,
  threadId,
  context
}: IToolCardProps<RunSqlView>): JSX.Element {
  const artifacts = cardArtifacts(card, view);
  const tableId =
    detail?.artifact_id ??
    artifacts.find(a => a.artifact.artifactType === 'dataset')?.artifact.artifactId;
  const others = artifacts.filter(a => a.artifact.artifactId !== tableId);
  return (
    <ToolCardFrame
      kind="sql"
      card={card}
      label={`SQL step ${card.datasetName ?? ''}`.trim()}
      context={context}
      subject={detail?.dataset ?? card.datasetName}
      details={[['What the query reads', detail?.intent_note ?? undefined]]}
      code={
        card.sql !== undefined ? { text: card.sql, language: 'sql', summary: 'Query' } : undefined
      }
    >
      <StepProgress card={card} />
      {detail && (
        <div
          className="jp-AnalystCard-shape"
          data-rows={detail.rows ?? undefined}
          data-columns={detail.columns.length}
        >
          {shape(detail)}
          {detail.columns.length > 0 && (
            <span className="jp-AnalystCard-columns">
              {': '}
              {detail.columns.map(c => `${c.name} ${c.type}`.trim()).join(', ')}
            </span>
          )}
        </div>
      )}
      {card.result?.error && <ToolError error={card.result.error} />}
      {tableId && card.status === 'ok' && (
        <div className="jp-AnalystCard-table" data-reused={card.reused ? 'true' : 'false'}>
          <ArtifactPreview artifactId={tableId} label="table" />
        </div>
      )}
      <StepArtifacts
        artifacts={artifacts.filter(a => a.artifact.artifactId === tableId).concat(others)}
      />
      <StepActions threadId={threadId} callId={card.callId} tool={card.tool} status={card.status} />
    </ToolCardFrame>
  );
}

export const RUN_SQL_CARD = toolCard(RUN_SQL, SqlCard);
