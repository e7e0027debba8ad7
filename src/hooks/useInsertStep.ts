/**
 * "Insert as cell" for a SQL or Python card: the step as a runnable code cell of the
 * notebook JupyterLab counts as current, below its active cell (with a set-up cell first
 * when the notebook has not opened the source yet), and what became of the last try.
 */

import * as React from 'react';

import { useAnalyst } from '../context';
import { insertIntoNotebook } from '../notebook/insert';
import { stepCell } from '../transport/api';
import { useCurrentNotebook } from './useCurrentNotebook';

/** What became of "Insert as cell". */
export type InsertOutcome =
  | { kind: 'idle' }
  | { kind: 'busy' }
  | { kind: 'inserted'; notebook: string; cell: number }
  | { kind: 'failed'; message: string };

/** The step's insertion into the current notebook. */
export interface IInsertStep {
  /** The current notebook's name (null when none is open: nothing to insert into). */
  notebook: string | null;
  outcome: InsertOutcome;
  /** Fetch the step's cell from the server and insert it (nothing without a notebook). */
  insert: () => Promise<void>;
}

export function useInsertStep(threadId: string, callId: string): IInsertStep {
  const { client, notebooks } = useAnalyst();
  const notebook = useCurrentNotebook(notebooks);
  const [outcome, setOutcome] = React.useState<InsertOutcome>({ kind: 'idle' });

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
      // An AnalystApiError is an Error too: the server's message.
      const message = reason instanceof Error ? reason.message : String(reason);
      setOutcome({ kind: 'failed', message });
    }
  };

  return { notebook: notebook ? notebook.title.label : null, outcome, insert };
}
