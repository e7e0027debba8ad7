import * as React from 'react';

import { useThreadAudit, type AuditAction } from '../hooks/useThreadAudit';
import { ReanswerReport } from './audit/ReanswerReport';
import { VerifyReport } from './audit/VerifyReport';

/** What the conversation's header offers to do with the thread (audit notebook, export, verify). */
export interface IThreadActionsProps {
  threadId: string;
  /** A turn is running (actions that read the finished thread wait). */
  running: boolean;
}

const BUSY_WORDS: Record<AuditAction, string> = {
  open: 'Writing the audit notebook…',
  export: 'Exporting…',
  verify: 'Verifying: re-running the notebook on the source…',
  reanswer: 'Re-answering: re-running the notebook on today’s data…'
};

/** A verification waits while the server runs others (a few at a time). */
function queuedWords(action: AuditAction): string {
  return `${action === 'reanswer' ? 'Re-answering' : 'Verifying'}: waiting for the server to start the re-run…`;
}

/**
 * The thread's audit actions: open its notebook in a JupyterLab tab, export it into the
 * user's folder, verify it (re-execute and compare fingerprints), and beside a verify report,
 * re-answer on today's data. They read the finished thread, so they wait while a turn runs.
 */
export function ThreadActions({ threadId, running }: IThreadActionsProps): JSX.Element {
  const { outcome, run, open, dismiss } = useThreadAudit(threadId);
  const busy = outcome.kind === 'busy';

  const waiting = running ? 'Wait for the turn to end' : undefined;
  // `shown`: a shorter word where the panel is narrow (its name for assistive tech stays whole).
  const button = (
    action: AuditAction,
    label: string,
    title: string,
    shown: string = label
  ): JSX.Element => (
    <button
      type="button"
      className={`jp-Button jp-mod-minimal jp-mod-styled jp-AnalystThreadActions-${action}`}
      disabled={running || busy}
      title={waiting ?? title}
      aria-label={shown !== label ? label : undefined}
      aria-busy={outcome.kind === 'busy' && outcome.action === action}
      onClick={() => void run(action)}
    >
      {shown}
    </button>
  );

  return (
    <div className="jp-AnalystThreadActions">
      <div className="jp-AnalystThreadActions-buttons" role="group" aria-label="Audit notebook">
        {button(
          'open',
          'Open audit notebook',
          'Export the thread as a notebook and open it in a tab',
          'Notebook'
        )}
        {button('export', 'Export', 'Write the thread as a notebook into your Jupyter folder')}
        {button(
          'verify',
          'Verify',
          'Re-run the thread’s notebook on its source and compare every artifact'
        )}
      </div>
      {outcome.kind !== 'idle' && (
        <div className="jp-AnalystThreadActions-outcome" aria-live="polite">
          {outcome.kind === 'busy' && (
            <span className="jp-AnalystThreadActions-progress">
              <progress
                aria-label={
                  outcome.waiting ? queuedWords(outcome.action) : BUSY_WORDS[outcome.action]
                }
              />{' '}
              {outcome.waiting ? queuedWords(outcome.action) : BUSY_WORDS[outcome.action]}
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
          {(outcome.kind === 'verified' || outcome.kind === 'reanswered') && (
            <VerifyReport report={outcome.report} />
          )}
          {(outcome.kind === 'verified' || outcome.kind === 'reanswered') && (
            // Beside the report: the thread's answers restated with today's values.
            <button
              type="button"
              className="jp-Button jp-mod-styled jp-mod-accept jp-AnalystThreadActions-reanswer"
              disabled={running}
              title={
                waiting ??
                'Re-run the notebook on the source as it is today and restate each cited number (old → new)'
              }
              onClick={() => void run('reanswer')}
            >
              Re-answer on today’s data
            </button>
          )}
          {outcome.kind === 'reanswered' && (
            <ReanswerReport reanswer={outcome.reanswer} onOpen={open} />
          )}
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
              onClick={dismiss}
            >
              ×
            </button>
          )}
        </div>
      )}
    </div>
  );
}
