/**
 * The budget status line's words: the budget nearest its limit in a few words, every budget
 * on hover, the server's message once one is spent, and nothing on a server without budgets.
 */

import { budgetSummary, compactCount, type BudgetLine, type BudgetReply } from '../../model/budget';

function line(fields: Partial<BudgetLine>): BudgetLine {
  return {
    scope: 'user',
    period: 'day',
    limit_tokens: 200_000,
    limit_usd: null,
    spent_tokens: 162_000,
    spent_usd: 0,
    left_tokens: 38_000,
    left_usd: null,
    exhausted: false,
    resets_at: '2026-12-05T00:00:00.000Z',
    ...fields
  };
}

function reply(budgets: BudgetLine[], fields: Partial<BudgetReply> = {}): BudgetReply {
  return {
    user: 'ann',
    limited: true,
    timezone: 'UTC',
    budgets,
    exhausted: false,
    message: null,
    ...fields
  };
}

describe('compactCount', () => {
  it('says a count in a few characters, never more than it is', () => {
    expect(
      [0, 950, 1_000, 1_999, 38_000, 38_999, 200_000, 1_500_000, 2_000_000].map(compactCount)
    ).toEqual(['0', '950', '1k', '1.9k', '38k', '38k', '200k', '1.5M', '2M']);
  });
});

describe('budgetSummary', () => {
  it('says nothing on a server without budgets, or before the budgets are read', () => {
    expect(budgetSummary(null)).toBeNull();
    expect(budgetSummary(reply([], { limited: false }))).toBeNull();
  });

  it("says what is left of the user's daily budget, and every budget in full on hover", () => {
    const summary = budgetSummary(reply([line({})]))!;
    expect(summary.text).toBe('38k of 200k tokens left today');
    expect(summary.exhausted).toBe(false);
    expect(summary.low).toBe(false);
    expect(summary.message).toBeNull();
    expect(summary.detail).toBe(
      'Yours (daily): 162,000 of 200,000 tokens spent; resets 2026-12-05 00:00 UTC'
    );
  });

  it('says the budget nearest its limit, by the share left, in tokens or dollars', () => {
    const thread = line({
      scope: 'thread',
      period: 'total',
      limit_tokens: null,
      left_tokens: null,
      spent_tokens: 900,
      limit_usd: 2,
      spent_usd: 1.8,
      left_usd: 0.2,
      resets_at: null
    });
    const summary = budgetSummary(reply([line({}), thread]))!;
    expect(summary.text).toBe('$0.20 of $2.00 left in this thread');
    expect(summary.detail.split('\n')).toEqual([
      'Yours (daily): 162,000 of 200,000 tokens spent; resets 2026-12-05 00:00 UTC',
      'This thread (in all): $1.80 of $2.00 spent'
    ]);
    const server = line({ scope: 'server', left_tokens: 5_000, spent_tokens: 195_000 });
    const low = budgetSummary(reply([line({}), server]))!;
    expect(low.text).toBe('5k of 200k tokens left on this server today');
    expect(low.low).toBe(true);
  });

  it("gives the server's message, with when it resets, once a budget is spent", () => {
    const message =
      "the daily budget of user 'ann' is spent: 201,000 tokens used of 200,000 today; it resets at 2026-12-05 00:00 UTC";
    const spent = line({ spent_tokens: 201_000, left_tokens: 0, exhausted: true });
    const summary = budgetSummary(reply([spent], { exhausted: true, message }))!;
    expect(summary.text).toBe('Budget spent until 2026-12-05 00:00 UTC');
    expect(summary.exhausted).toBe(true);
    expect(summary.message).toBe(message);
    expect(summary.low).toBe(true);
    expect(summary.detail.split('\n')).toEqual([
      message,
      'Yours (daily): 201,000 of 200,000 tokens spent; resets 2026-12-05 00:00 UTC'
    ]);
  });

  it('says whose budget is spent for good when it never resets', () => {
    const thread = line({
      scope: 'thread',
      period: 'total',
      spent_tokens: 200_000,
      left_tokens: 0,
      exhausted: true,
      resets_at: null
    });
    const summary = budgetSummary(
      reply([line({}), thread], { exhausted: true, message: 'spent' })
    )!;
    expect(summary.text).toBe('Budget spent in this thread');
  });
});
