/**
 * What is left of the caller's budgets (`GET budget`), in a few words for the panel's status
 * line: the budget nearest its limit ("38k of 200k tokens left today"), each budget in full
 * on hover, and the server's own message once one is spent (what was spent, when it resets).
 */

import type { components } from './api.generated';

type Schemas = components['schemas'];

/** `GET budget[?thread_id=]`: the caller's budgets as they stand. */
export type BudgetReply = Schemas['BudgetReply'];
/** One budget: its limit, what was spent and is left, when it resets. */
export type BudgetLine = Schemas['BudgetLine'];

/** The status line's words. */
export interface IBudgetSummary {
  /** The budget nearest its limit, in a few words ("38k of 200k tokens left today"). */
  text: string;
  /** Every budget, a line each (the hover text). */
  detail: string;
  /** A budget is spent: the next model call is refused. */
  exhausted: boolean;
  /** The server's words for a refused turn (what was spent, when it resets), when `exhausted`. */
  message: string | null;
  /** Less than a tenth of the nearest budget is left. */
  low: boolean;
}

/**
 * A count in few characters: 950, 38k, 1.5M.
 *
 * Rounded down, so that what is left is never said to be more than it is.
 */
export function compactCount(n: number): string {
  const floor = (value: number): string => {
    const tenths = Math.floor(value * 10) / 10;
    return tenths >= 100 || Number.isInteger(tenths)
      ? String(Math.floor(value))
      : tenths.toFixed(1);
  };
  if (n >= 1_000_000) {
    return `${floor(n / 1_000_000)}M`;
  }
  if (n >= 10_000) {
    return `${Math.floor(n / 1_000)}k`;
  }
  if (n >= 1_000) {
    return `${floor(n / 1_000)}k`;
  }
  return String(Math.max(0, Math.floor(n)));
}

/** Dollars as a budget says them: cents. */
export function dollars(usd: number): string {
  return `$${usd.toFixed(2)}`;
}

/** Whose budget and for how long, as the end of "… left": " today", " in this thread". */
function where(line: BudgetLine): string {
  const scope = { user: '', thread: ' in this thread', server: ' on this server' }[line.scope];
  return `${scope}${line.period === 'day' ? ' today' : ''}`;
}

/** What is left of one limit of a line, as a fraction of it; null when the line has no such limit. */
function leftOf(line: BudgetLine, unit: 'tokens' | 'usd'): number | null {
  const limit = unit === 'tokens' ? line.limit_tokens : line.limit_usd;
  const left = unit === 'tokens' ? line.left_tokens : line.left_usd;
  if (limit === null || left === null) {
    return null;
  }
  return limit > 0 ? left / limit : 0;
}

/** "38k of 200k tokens left today", "$0.40 of $2.00 left in this thread". */
function leftWords(line: BudgetLine, unit: 'tokens' | 'usd'): string {
  if (unit === 'tokens') {
    return `${compactCount(line.left_tokens ?? 0)} of ${compactCount(line.limit_tokens ?? 0)} tokens left${where(line)}`;
  }
  return `${dollars(line.left_usd ?? 0)} of ${dollars(line.limit_usd ?? 0)} left${where(line)}`;
}

const SCOPE_NAME = { user: 'Yours', thread: 'This thread', server: 'The server' } as const;

/** One budget in full, for the hover text. */
function detailLine(line: BudgetLine): string {
  const parts: string[] = [];
  if (line.limit_tokens !== null) {
    parts.push(
      `${line.spent_tokens.toLocaleString('en-US')} of ${line.limit_tokens.toLocaleString('en-US')} tokens spent`
    );
  }
  if (line.limit_usd !== null) {
    parts.push(`${dollars(line.spent_usd)} of ${dollars(line.limit_usd)} spent`);
  }
  const period = line.period === 'day' ? 'daily' : 'in all';
  const resets = line.resets_at === null ? '' : `; resets ${resetTime(line.resets_at)}`;
  return `${SCOPE_NAME[line.scope]} (${period}): ${parts.join(', ')}${resets}`;
}

/** An ISO time as "2026-12-05 00:00 UTC". */
function resetTime(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

/**
 * A spent budget in a few words: until when ("Budget spent until 2026-12-05 00:00 UTC", the
 * latest reset of those spent), or whose, for one that never resets ("Budget spent in this thread").
 */
function spentWords(budgets: readonly BudgetLine[]): string {
  const spent = budgets.filter(line => line.exhausted);
  const forGood = spent.find(line => line.resets_at === null);
  if (forGood !== undefined || spent.length === 0) {
    const scope = forGood === undefined ? '' : where(forGood);
    return `Budget spent${scope}`;
  }
  const latest = spent.map(line => line.resets_at as string).sort()[spent.length - 1];
  return `Budget spent until ${resetTime(latest)}`;
}

/**
 * The status line of `reply`: null when the server has no budgets (then nothing is shown).
 * The line said is the budget with the least left, as a fraction of its limit: the one the
 * next turn meets first.
 */
export function budgetSummary(reply: BudgetReply | null): IBudgetSummary | null {
  if (reply === null || !reply.limited || reply.budgets.length === 0) {
    return null;
  }
  let nearest: { line: BudgetLine; unit: 'tokens' | 'usd'; left: number } | null = null;
  for (const line of reply.budgets) {
    for (const unit of ['tokens', 'usd'] as const) {
      const left = leftOf(line, unit);
      if (left !== null && (nearest === null || left < nearest.left)) {
        nearest = { line, unit, left };
      }
    }
  }
  if (nearest === null) {
    return null;
  }
  const lines = reply.budgets.map(detailLine);
  return {
    text: reply.exhausted ? spentWords(reply.budgets) : leftWords(nearest.line, nearest.unit),
    // Spent, the server's own words (what, of what, when it resets) come first.
    detail: (reply.exhausted && reply.message ? [reply.message, ...lines] : lines).join('\n'),
    exhausted: reply.exhausted,
    message: reply.exhausted ? reply.message : null,
    low: nearest.left < 0.1
  };
}
