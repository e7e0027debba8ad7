import * as React from 'react';

import { AnalystApiError, stepCell } from '../transport/api';
import { useAnalyst } from '../context';
import { insertIntoNotebook } from '../notebook/insert';
import { useCurrentNotebook } from '../hooks/useCurrentNotebook';

/** What a SQL or Python card offers to do with its step ("Insert as cell"). */
export interface IStepActionsProps {
  threadId: string;
  callId: string;
  tool: string;
}

/** The tools whose steps are notebook cells. */
const CELL_TOOLS = ['run_sql', 'run_python'];

type Outcome =
  | { kind: 'idle' }
  | { kind: 'busy' }
  | { kind: 'inserted'; notebook: string; cell: number }
  | { kind: 'failed'; message: string };

/**
 * "Insert as cell": the step as a runnable code cell of the active notebook, below its
 * active cell (with a set-up cell first when the notebook has not opened the source yet).
 */
export function StepActions({ threadId, callId, tool }: IStepActionsProps): JSX.Element | null {
  const { client, notebooks } = useAnalyst();
  const notebook = useCurrentNotebook(notebooks);
  const [outcome, setOutcome] = React.useState<Outcome>({ kind: 'idle' });

  if (!CELL_TOOLS.includes(tool)) {
    return null;
  }

  const insert = async (): Promise<void> => {
    if (!notebook) {
      return;
    }
    setOutcome({ kind: 'busy' });
    try {
      const step = await stepCell(client, threadId, callId);
      await notebook.context.ready;
      const cell = insertIntoNotebook(notebook, step);
      setOutcome({ kind: 'inserted', notebook: notebook.title.label, cell });
    } catch (reason) {
      const message =
        reason instanceof AnalystApiError || reason instanceof Error
          ? reason.message
          : String(reason);
      setOutcome({ kind: 'failed', message });
    }
  };

  const title = notebook
    ? `Insert this step as a runnable cell into ${notebook.title.label}, below its active cell`
    : 'Open a notebook to insert this step into it';
  return (
    <div className="jp-AnalystStepActions">
      {/* The tooltip on a wrapper too: a disabled button gets no pointer events. */}
      <span title={title}>
        <button
          type="button"
          className="jp-Button jp-mod-minimal jp-mod-styled jp-AnalystStepActions-insert"
          title={title}
          disabled={!notebook || outcome.kind === 'busy'}
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
