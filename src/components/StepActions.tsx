import * as React from 'react';

import { useInsertStep } from '../hooks/useInsertStep';
import { toolModel, type CardStatus } from '../model';

/** What a card of a step that is a notebook cell offers to do with it ("Insert as cell"). */
export interface IStepActionsProps {
  threadId: string;
  callId: string;
  tool: string;
  /** Where the step stands: only a step that succeeded is a cell worth inserting. */
  status: CardStatus;
}

/** Whether a step is offered as a cell: a step of a tool whose steps are cells (its model's
 * `makesCell`) that succeeded (a refused DELETE, a failed or running step would insert a
 * cell that fails). */
export function canInsert(tool: string, status: CardStatus): boolean {
  return toolModel(tool)?.makesCell === true && status === 'ok';
}

/**
 * "Insert as cell": the step as a runnable code cell of the active notebook, below its
 * active cell (with a set-up cell first when the notebook has not opened the source yet).
 */
export function StepActions({
  threadId,
  callId,
  tool,
  status
}: IStepActionsProps): JSX.Element | null {
  const { notebook, outcome, insert } = useInsertStep(threadId, callId);

  if (!canInsert(tool, status)) {
    return null;
  }

  const title =
    notebook !== null
      ? `Insert this step as a runnable cell into ${notebook}, below its active cell`
      : 'Open a notebook to insert this step into it';
  return (
    <div className="jp-AnalystStepActions">
      {/* The tooltip on a wrapper too: a disabled button gets no pointer events. */}
      <span title={title}>
        <button
          type="button"
          className="jp-Button jp-mod-minimal jp-mod-styled jp-AnalystStepActions-insert"
          title={title}
          disabled={notebook === null || outcome.kind === 'busy'}
          onClick={() => void insert()}
        >
          Insert as cell
        </button>
      </span>
      {outcome.kind === 'inserted' && (
        <span className="jp-AnalystStepActions-note" aria-live="polite">
          Inserted into {outcome.notebook} (cell {outcome.cell + 1})
        </span>
      )}
      {outcome.kind === 'failed' && (
        <span className="jp-AnalystStepActions-error" role="alert">
          {outcome.message}
        </span>
      )}
    </div>
  );
}
