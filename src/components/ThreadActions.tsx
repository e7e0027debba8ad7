import * as React from 'react';

import {
  AnalystApiError,
  exportThread,
  IExportResult,
  IVerifyReport,
  verifyThread
} from '../transport/api';
import { useAnalyst } from '../context';
import { reloadOpenCopies } from '../notebook/audit';
import { VerifyReport } from './audit/VerifyReport';

/** What the conversation's header offers to do with the thread (audit notebook, export, verify). */
export interface IThreadActionsProps {
  threadId: string;
  /** A turn is running (actions that read the finished thread wait). */
  running: boolean;
}

type Action = 'open' | 'export' | 'verify';

type Outcome =
  | { kind: 'idle' }
  | { kind: 'busy'; action: Action; waiting?: boolean }
  | { kind: 'exported'; result: IExportResult; unsaved: number }
  | { kind: 'verified'; report: IVerifyReport }
  | { kind: 'failed'; action: Action; error: AnalystApiError };

const BUSY_WORDS: Record<Action, string> = {
  open: 'Writing the audit notebook…',
  export: 'Exporting…',
  verify: 'Verifying: re-running the notebook on the source…'
};

/** A verification waits while the server runs others (a few at a time). */
const QUEUED_WORDS = 'Verifying: waiting for the server to start the re-run…';

function asApiError(reason: unknown): AnalystApiError {
  return reason instanceof AnalystApiError
    ? reason
    : new AnalystApiError(0, {
        message: reason instanceof Error ? reason.message : String(reason),
        reason: null,
        hint: null
      });
}

/**
 * The thread's audit actions: open its notebook in a JupyterLab tab, export it into the
 * user's folder, verify it (re-execute and compare fingerprints). They read the finished
 * thread, so they wait while a turn runs.
 */
export function ThreadActions({ threadId, running }: IThreadActionsProps): JSX.Element {
  const { client, commands, notebooks } = useAnalyst();
  const [outcome, setOutcome] = React.useState<Outcome>({ kind: 'idle' });
  const busy = outcome.kind === 'busy';
  // A verification is followed while the thread is shown; the server finishes it anyway.
  const following = React.useRef<AbortController | null>(null);
  React.useEffect(() => () => following.current?.abort(), [threadId]);

  const open = (path: string): void => {
    void commands?.execute('docmanager:open', { path });
  };

  const run = async (action: Action): Promise<void> => {
    setOutcome({ kind: 'busy', action });
    try {
      if (action === 'verify') {
        following.current?.abort();
        const controller = new AbortController();
        following.current = controller;
        const report = await verifyThread(client, threadId, {
          signal: controller.signal,
          onProgress: verification =>
            setOutcome({ kind: 'busy', action, waiting: verification.status === 'queued' })
        });
        setOutcome({ kind: 'verified', report });
        return;
      }
      const result = await exportThread(client, threadId);
      // A tab of the file opened before shows the new export (unless it has unsaved changes).
      const { unsaved } = await reloadOpenCopies(notebooks, result.path);
      if (action === 'open') {
        open(result.path);
      }
      setOutcome(
        action === 'open' && !unsaved ? { kind: 'idle' } : { kind: 'exported', result, unsaved }
      );
    } catch (reason) {
      if (reason instanceof DOMException && reason.name === 'AbortError') {
        return; // no longer shown: nothing to say
      }
      setOutcome({ kind: 'failed', action, error: asApiError(reason) });
    }
  };

  const waiting = running ? 'Wait for the turn to end' : undefined;
  const button = (action: Action, label: string, title: string): JSX.Element => (
    <button
      type="button"
      className={`jp-Button jp-mod-minimal jp-mod-styled jp-AnalystThreadActions-${action}`}
      disabled={running || busy}
      title={waiting ?? title}
      aria-busy={outcome.kind === 'busy' && outcome.action === action}
      onClick={() => void run(action)}
    >
      {label}
    </button>
  );

  return (
    <div className="jp-AnalystThreadActions">
      <div className="jp-AnalystThreadActions-buttons" role="group" aria-label="Audit notebook">
        {button('open', 'Open audit notebook', 'Export the thread as a notebook and open it in a tab')}
        {button('export', 'Export', 'Write the thread as a notebook into your Jupyter folder')}
        {button('verify', 'Verify', 'Re-run the thread’s notebook on its source and compare every artifact')}
      </div>
      {outcome.kind !== 'idle' && (
        <div className="jp-AnalystThreadActions-outcome" aria-live="polite">
          {outcome.kind === 'busy' && (
            <span className="jp-AnalystThreadActions-progress">
              <progress aria-label={outcome.waiting ? QUEUED_WORDS : BUSY_WORDS[outcome.action]} />{' '}
              {outcome.waiting ? QUEUED_WORDS : BUSY_WORDS[outcome.action]}
            </span>
          )}
          {outcome.kind === 'exported' && (
            <span className="jp-AnalystThreadActions-exported">
              Exported {outcome.result.cells} cells to{' '}
              <a
                href="#"
                className="jp-AnalystThreadActions-path"
                onClick={event => {
                  event.preventDefault();
                  open(outcome.result.path);
                }}
              >
                {outcome.result.path}
              </a>
              {outcome.unsaved > 0 &&
                '. Its open tab has unsaved changes: reload it from disk (File > Reload Notebook from Disk) to see this export.'}
            </span>
          )}
          {outcome.kind === 'verified' && <VerifyReport report={outcome.report} />}
          {outcome.kind === 'failed' && (
            <span className="jp-AnalystThreadActions-error" role="alert">
              {outcome.error.message}
              {outcome.error.hint ? ` (${outcome.error.hint})` : ''}
            </span>
          )}
          {outcome.kind !== 'busy' && (
            <button
              type="button"
              className="jp-Button jp-mod-minimal jp-AnalystThreadActions-dismiss"
              aria-label="Dismiss"
              onClick={() => setOutcome({ kind: 'idle' })}
            >
              ×
            </button>
          )}
        </div>
      )}
    </div>
  );
}
