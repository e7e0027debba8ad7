import * as React from 'react';

import { plusCalls, type CountedBy, type TurnLedger } from '../model';

const COUNTED: Record<CountedBy, string> = {
  server: 'counted by the model server',
  estimate: 'estimated',
  mixed: 'partly estimated',
  none: 'no model call'
};

/** A cost in USD as the CLI says it: cents above a dollar, otherwise to six places. */
export function money(usd: number | null): string {
  if (usd === null) {
    return 'no price';
  }
  if (usd >= 0.995) {
    return `$${usd.toFixed(2)}`;
  }
  return usd === 0 ? '$0' : `$${usd.toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

type Calls = TurnLedger['usage'];

function callsAndTokens(u: Calls): string {
  const tokens = `${u.prompt_tokens.toLocaleString('en-US')} prompt + ${u.completion_tokens.toLocaleString('en-US')} completion tokens`;
  const priced = u.cost_usd === null ? '' : ` · ${money(u.cost_usd)}`;
  return `${plural(u.calls, 'model call')} · ${tokens} (${COUNTED[u.counted_by]})${priced}`;
}

/**
 * What a turn cost, in words: its model calls and tokens (and how they were counted), the
 * cost where the model has a price, and what reusing steps saved. Never a cost without a price.
 *
 * The end-of-turn summarizer's call (told by the `memory` event, after the turn's end) is
 * counted in the first line, as `run --json` counts it, and said apart on its own line.
 */
export function costLines(ledger: TurnLedger): {
  cost: string;
  summarizer: string | null;
  saved: string | null;
} {
  const extra = ledger.summarizer;
  const summarized = extra.calls > 0;
  const cost = callsAndTokens(summarized ? plusCalls(ledger.usage, extra) : ledger.usage);
  const summarizer = summarized
    ? `of which the thread's summary, updated after the answer: ${callsAndTokens(extra)}`
    : null;
  const s = ledger.saved;
  if (s.steps === 0) {
    return { cost, summarizer, saved: null };
  }
  const savedCost = s.cost_usd === null ? '' : `, ${money(s.cost_usd)}`;
  const untracked = s.untracked > 0 ? `; ${s.untracked} recorded without tokens` : '';
  // Reuse saves the step's run; the model call that asked for it was still made (and is
  // counted above), so its tokens are what the step first cost, not what was saved.
  const one = s.steps === 1;
  const saved =
    `Reuse saved ${one ? "1 step's" : `${s.steps} steps'`} run: ${s.execution_s.toFixed(2)} s ` +
    `(${one ? 'it' : 'they'} first cost ${s.prompt_tokens.toLocaleString('en-US')} prompt + ` +
    `${s.completion_tokens.toLocaleString('en-US')} completion tokens${savedCost}${untracked})`;
  return { cost, summarizer, saved };
}

/** The turn footer's cost line, the summarizer's share of it, and what reuse saved when a step was reused. */
export function TurnCost({ ledger }: { ledger: TurnLedger }): JSX.Element {
  const { cost, summarizer, saved } = costLines(ledger);
  return (
    <div className="jp-AnalystTurn-cost" data-summary="cost">
      <span data-cost="usage">{cost}</span>
      {summarizer !== null && <span data-cost="summarizer">{summarizer}</span>}
      {saved !== null && <span data-cost="saved">{saved}</span>}
    </div>
  );
}
