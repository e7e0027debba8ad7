/**
 * The thread's audit actions: open its notebook in a JupyterLab tab, export it into the
 * user's folder, verify it (re-execute and compare fingerprints), re-answer its answers on
 * today's data, and what became of the last one. A verification is followed while the thread is shown; the server finishes it
 * anyway.
 */

import * as React from 'react';

import { useAnalyst } from '../context';
import { reloadOpenCopies } from '../notebook/audit';
import {
  AnalystApiError,
  exportThread,
  IExportResult,
  IReanswered,
  IVerifyReport,
  reanswerThread,
  verifyThread
} from '../transport/api';

/** An audit action. */
export type AuditAction = 'open' | 'export' | 'verify' | 'reanswer';

/** What became of the last action. */
export type AuditOutcome =
  | { kind: 'idle' }
  | { kind: 'busy'; action: AuditAction; waiting?: boolean }
  | { kind: 'exported'; result: IExportResult; unsaved: number }
  | { kind: 'verified'; report: IVerifyReport }
  | ({ kind: 'reanswered' } & IReanswered)
  | { kind: 'failed'; action: AuditAction; error: AnalystApiError };

function asApiError(reason: unknown): AnalystApiError {
  return reason instanceof AnalystApiError
    ? reason
    : new AnalystApiError(0, {
        message: reason instanceof Error ? reason.message : String(reason),
        reason: null,
        hint: null
      });
}

/** The audit actions of a thread and the outcome of the last one. */
export interface IThreadAudit {
  outcome: AuditOutcome;
  /** Run an action (its outcome replaces the last). */
  run: (action: AuditAction) => Promise<void>;
  /** Open a path of the user's folder in a JupyterLab tab. */
  open: (path: string) => void;
  /** Forget the last outcome. */
  dismiss: () => void;
}

export function useThreadAudit(threadId: string): IThreadAudit {
  const { client, commands, notebooks } = useAnalyst();
  const [outcome, setOutcome] = React.useState<AuditOutcome>({ kind: 'idle' });
  const following = React.useRef<AbortController | null>(null);
  React.useEffect(() => () => following.current?.abort(), [threadId]);

  const open = (path: string): void => {
    void commands?.execute('docmanager:open', { path });
  };

  const run = async (action: AuditAction): Promise<void> => {
    setOutcome({ kind: 'busy', action });
    try {
      if (action === 'verify' || action === 'reanswer') {
        following.current?.abort();
        const controller = new AbortController();
        following.current = controller;
        const options = {
          signal: controller.signal,
          onProgress: (verification: { status: string }) =>
            setOutcome({ kind: 'busy', action, waiting: verification.status === 'queued' })
        };
        if (action === 'reanswer') {
          setOutcome({ kind: 'reanswered', ...(await reanswerThread(client, threadId, options)) });
        } else {
          setOutcome({ kind: 'verified', report: await verifyThread(client, threadId, options) });
        }
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

  return { outcome, run, open, dismiss: () => setOutcome({ kind: 'idle' }) };
}
