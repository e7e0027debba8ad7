import * as React from 'react';

import { budgetSummary, type BudgetReply } from '../model/budget';
import { InfoTip } from './cards/InfoTip';

/**
 * What is left of the caller's budgets, one short line above the prompt box ("38k of 200k
 * tokens left today", each budget on its ⓘ); once one is spent, until when ("Budget spent
 * until 2026-12-05 00:00 UTC"), the server's message on the ⓘ and, to a screen reader, with
 * the line (the turn it stopped says it in full). Nothing on a server without budgets.
 */
export function BudgetStatus({ reply }: { reply: BudgetReply | null }): JSX.Element | null {
  const summary = budgetSummary(reply);
  if (summary === null) {
    return null;
  }
  return (
    <div
      className="jp-AnalystBudget"
      role="status"
      data-exhausted={summary.exhausted ? 'true' : 'false'}
      data-low={summary.low ? 'true' : 'false'}
    >
      <span className="jp-AnalystBudget-text">{summary.text}</span>
      {summary.message && <span className="jp-AnalystSrOnly">: {summary.message}</span>}
      <InfoTip label="Budgets" text={summary.detail} />
    </div>
  );
}
