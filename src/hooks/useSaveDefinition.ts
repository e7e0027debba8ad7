import * as React from 'react';

import { useAnalyst } from '../context';
import { refusedLine, savedLine, type SavedMetric } from '../model/definitions';
import { AnalystApiError } from '../transport/api';
import { saveDefinition } from '../transport/team';

/** "Save as a definition" of one suggestion: shown first, then saved or left. */
export interface ISaveDefinitionState {
  busy: boolean;
  /** The file as it would be written, once shown and until saved or cancelled. */
  preview: SavedMetric | null;
  /** What came of it: saved, or why not (null until then). */
  outcome: { kind: 'saved' | 'refused'; text: string } | null;
  show: () => Promise<void>;
  save: () => Promise<void>;
  cancel: () => void;
}

/** Suggestion `index` of turn `turn`: its file shown, then saved, on the person's word only. */
export function useSaveDefinition(
  threadId: string,
  turn: number,
  index: number
): ISaveDefinitionState {
  const { client } = useAnalyst();
  const [busy, setBusy] = React.useState(false);
  const [preview, setPreview] = React.useState<SavedMetric | null>(null);
  const [outcome, setOutcome] = React.useState<ISaveDefinitionState['outcome']>(null);
  const ask = React.useCallback(
    async (write: boolean): Promise<void> => {
      setBusy(true);
      try {
        const saved = await saveDefinition(client, threadId, { turn, index }, write);
        if (write) {
          setPreview(null);
          setOutcome({ kind: 'saved', text: savedLine(saved) });
        } else {
          setOutcome(null);
          setPreview(saved);
        }
      } catch (error) {
        const refusal =
          error instanceof AnalystApiError
            ? {
                status: error.status,
                reason: error.reason,
                message: error.message,
                hint: error.hint
              }
            : { status: 0, reason: null, message: String(error), hint: null };
        setPreview(null);
        setOutcome({ kind: 'refused', text: refusedLine(refusal) });
      } finally {
        setBusy(false);
      }
    },
    [client, threadId, turn, index]
  );
  const show = React.useCallback(() => ask(false), [ask]);
  const save = React.useCallback(() => ask(true), [ask]);
  const cancel = React.useCallback(() => setPreview(null), []);
  return { busy, preview, outcome, show, save, cancel };
}
