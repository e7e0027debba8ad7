import * as React from 'react';

import { useAnalyst } from '../context';
import { refusedOutcome, verifiedOutcome, type IVerifyOutcome } from '../model/verifiedAnswer';
import { AnalystApiError } from '../transport/api';
import { verifyAnswer } from '../transport/team';

/** "Verify this answer" of one turn: asking, and what came of it. */
export interface IVerifyAnswerState {
  busy: boolean;
  /** Null until asked. */
  outcome: IVerifyOutcome | null;
  verify: () => Promise<void>;
}

/** Verifying turn `turn` of a thread into the server's context folder, once asked. */
export function useVerifyAnswer(threadId: string, turn: number): IVerifyAnswerState {
  const { client } = useAnalyst();
  const [busy, setBusy] = React.useState(false);
  const [outcome, setOutcome] = React.useState<IVerifyOutcome | null>(null);
  const verify = React.useCallback(async (): Promise<void> => {
    setBusy(true);
    try {
      setOutcome(verifiedOutcome(await verifyAnswer(client, threadId, { turn })));
    } catch (error) {
      const refusal =
        error instanceof AnalystApiError
          ? { status: error.status, reason: error.reason, message: error.message, hint: error.hint }
          : { status: 0, reason: null, message: String(error), hint: null };
      setOutcome(refusedOutcome(refusal));
    } finally {
      setBusy(false);
    }
  }, [client, threadId, turn]);
  return { busy, outcome, verify };
}
