import * as React from 'react';

import { useVerifyAnswer } from '../hooks/useVerifyAnswer';

/**
 * Whether the server has a context folder to verify answers into (`GET config`'s
 * `context.configured`): the action is offered only then.
 */
export const ContextFolderOffered = React.createContext(false);

export interface IVerifyAnswerProps {
  threadId: string;
  /** The turn's number in its thread (1 for the first). */
  turn: number;
}

/**
 * "Verify this answer", under a completed turn's answer where the server has a context
 * folder: the turn's question and SQL become a verified query of the folder and a task of
 * its suite. Says what was written, or why not (not an editor; the turn or the data refused).
 */
export function VerifyAnswer({ threadId, turn }: IVerifyAnswerProps): JSX.Element {
  const { busy, outcome, verify } = useVerifyAnswer(threadId, turn);
  const offered = outcome === null || outcome.retry;
  return (
    <div className="jp-AnalystVerifyAnswer" data-outcome={outcome?.kind ?? 'none'}>
      {offered && (
        <button
          type="button"
          className="jp-Button jp-mod-styled jp-mod-minimal jp-AnalystVerifyAnswer-button"
          disabled={busy}
          title="Save this turn's question and SQL as a verified query of the team's context folder, and its answer as a task of the folder's suite"
          onClick={() => void verify()}
        >
          {busy ? 'Verifying…' : outcome ? 'Verify again' : '✓ Verify this answer'}
        </button>
      )}
      <div className="jp-AnalystVerifyAnswer-outcome" role="status">
        {outcome?.text ?? ''}
      </div>
    </div>
  );
}
