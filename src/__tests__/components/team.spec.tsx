/**
 * The team's parts of a conversation: "Verify this answer" under a completed answer where the
 * server has a context folder (what was written, or the refusal), and the budget line (what is
 * left, read again when a turn ends; the server's message once spent; nothing without budgets).
 */

import * as React from 'react';
import { act } from 'react';

import { Conversation } from '../../components/Conversation';
import { AnalystContext } from '../../context';
import type { BudgetLine } from '../../model/budget';
import { AnalystApiError, type AnalystClient, type IThread } from '../../transport/api';
import { mountedRoot } from '../dom';
import { endedAt, FakeServer, threadOf } from '../fakeServer';
import { demoTurn } from '../helpers';

const mounted = mountedRoot();
const THREAD: IThread = threadOf('thr_1', 'Revenue by region');

function nextTask(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    if (check()) {
      return;
    }
    await act(async () => {
      await nextTask();
    });
  }
  throw new Error(`never happened: ${what}`);
}

function find(selector: string): HTMLElement | null {
  return mounted.host().querySelector<HTMLElement>(selector);
}

async function open(server: FakeServer, contextFolder: boolean): Promise<void> {
  const client: AnalystClient = server.client();
  await act(async () => {
    mounted.root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <Conversation
          client={client}
          thread={THREAD}
          contextFolder={contextFolder}
          onBack={() => undefined}
        />
      </AnalystContext.Provider>
    );
    await nextTask();
  });
  await until(() => find('.jp-AnalystTurn') !== null, 'the turn is shown');
}

async function click(element: Element): Promise<void> {
  await act(async () => {
    element.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await nextTask();
  });
}

function verifyButton(): HTMLButtonElement | null {
  return find('.jp-AnalystVerifyAnswer-button') as HTMLButtonElement | null;
}

describe('Verify this answer', () => {
  it('is not offered where the server has no context folder', async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    await open(server, false);
    expect(find('.jp-AnalystVerifyAnswer')).toBeNull();
  });

  it('verifies the turn by its number and says what was written', async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    server.verification = {
      thread_id: 'thr_1',
      turn: 1,
      call_id: 'call_1',
      query_file: 'queries/revenue_by_region_per_month_with_a_chart.sql',
      suite_file: 'suite.jsonl',
      task_id: 'revenue_by_region_per_month_with_a_chart',
      question: 'Revenue by region per month, with a chart',
      gold_sql: 'SELECT 1',
      answer: [[1]],
      tolerance: 0,
      source: 'sales',
      verified_by: 'ann',
      verified_at: '2026-12-04',
      queries: 1
    };
    await open(server, true);
    const button = verifyButton()!;
    expect(button.textContent).toBe('✓ Verify this answer');
    // A plain button after the answer card: in the Tab order, not one of a card's controls.
    expect(button.closest('[data-card]')).toBeNull();
    expect(button.tabIndex).toBe(0);
    await click(button);
    await until(() => find('[data-outcome="verified"]') !== null, 'the outcome is shown');
    expect(server.calls).toContain('POST verified-answers thr_1');
    expect(server.calls).toContain('body {"turn":1}');
    expect(find('.jp-AnalystVerifyAnswer-outcome')!.textContent).toBe(
      'Verified: queries/revenue_by_region_per_month_with_a_chart.sql and task ' +
        '“revenue_by_region_per_month_with_a_chart” of suite.jsonl (answer 1 row, by ann)'
    );
    expect(verifyButton()).toBeNull();
  });

  it('says who may verify when the user may not, and offers it no more', async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    server.verification = new AnalystApiError(403, {
      message: "only the context folder's editors may verify answers",
      reason: 'not_a_context_editor',
      hint: 'an administrator names them in c.AnalystApp.context_editors'
    });
    await open(server, true);
    await click(verifyButton()!);
    await until(() => find('[data-outcome="refused"]') !== null, 'the refusal is shown');
    expect(find('.jp-AnalystVerifyAnswer-outcome')!.textContent).toBe(
      'You may not verify answers: only the context folder’s editors may. ' +
        'An administrator names them in c.AnalystApp.context_editors.'
    );
    expect(verifyButton()).toBeNull();
  });

  it("says a conflict's reason and offers to ask again", async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    server.verification = new AnalystApiError(409, {
      message: 'the query file queries/x.sql exists',
      reason: 'query_exists',
      hint: 'choose another name'
    });
    await open(server, true);
    await click(verifyButton()!);
    await until(() => find('[data-outcome="refused"]') !== null, 'the refusal is shown');
    expect(find('.jp-AnalystVerifyAnswer-outcome')!.textContent).toBe(
      'Not verified: the query file queries/x.sql exists (choose another name)'
    );
    expect(verifyButton()!.textContent).toBe('Verify again');
  });
});

describe('the budget line', () => {
  const DAILY: BudgetLine = {
    scope: 'user',
    period: 'day',
    limit_tokens: 200_000,
    limit_usd: null,
    spent_tokens: 162_000,
    spent_usd: 0,
    left_tokens: 38_000,
    left_usd: null,
    exhausted: false,
    resets_at: '2026-12-05T00:00:00.000Z'
  };

  it("says what is left of the thread's budgets, asked with the thread", async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    server.budget = { ...server.budget, limited: true, budgets: [DAILY] };
    await open(server, false);
    await until(() => find('.jp-AnalystBudget') !== null, 'the budget is shown');
    expect(find('.jp-AnalystBudget-text')!.textContent).toBe('38k of 200k tokens left today');
    expect(find('.jp-AnalystBudget')!.getAttribute('data-exhausted')).toBe('false');
    expect(server.budgetQueries).toContainEqual({ thread_id: 'thr_1' });
  });

  it("shows the server's message once a budget is spent", async () => {
    const message =
      "the daily budget of user 'ada' is spent: 201,000 tokens used of 200,000 today; it resets at 2026-12-05 00:00 UTC";
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    server.budget = {
      ...server.budget,
      limited: true,
      exhausted: true,
      message,
      budgets: [{ ...DAILY, spent_tokens: 201_000, left_tokens: 0, exhausted: true }]
    };
    await open(server, false);
    await until(() => find('.jp-AnalystBudget') !== null, 'the budget is shown');
    expect(find('.jp-AnalystBudget-text')!.textContent).toBe(
      'Budget spent until 2026-12-05 00:00 UTC'
    );
    // The server's words in full: on the ⓘ, and to a screen reader with the line.
    expect(find('.jp-AnalystBudget .jp-AnalystSrOnly')!.textContent).toBe(`: ${message}`);
    expect(
      find('.jp-AnalystBudget [role="tooltip"], .jp-AnalystBudget .jp-AnalystInfo')!.textContent
    ).toContain(message);
    expect(find('.jp-AnalystBudget')!.getAttribute('data-exhausted')).toBe('true');
  });

  it('is read again when a turn ends, and says what the turn left', async () => {
    const server = new FakeServer([THREAD]);
    server.budget = { ...server.budget, limited: true, budgets: [DAILY] };
    const client = server.client();
    await act(async () => {
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <Conversation client={client} thread={THREAD} onBack={() => undefined} />
        </AnalystContext.Provider>
      );
      await nextTask();
    });
    await until(() => find('.jp-AnalystBudget') !== null, 'the budget is shown');
    const box = mounted
      .host()
      .querySelector<HTMLTextAreaElement>('[aria-label="Ask about your data"]')!;
    const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!;
    act(() => {
      setter.call(box, 'Revenue by region per month, with a chart');
      box.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await act(async () => {
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
      await nextTask();
    });
    await until(() => server.calls.includes('POST turns thr_1'), 'the turn is asked for');
    const asked = server.budgetQueries.length;
    server.budget = {
      ...server.budget,
      budgets: [{ ...DAILY, spent_tokens: 190_500, left_tokens: 9_500 }]
    };
    server.endTurn('thr_1', endedAt(8, 'interrupted'));
    await until(
      () => find('.jp-AnalystBudget-text')?.textContent === '9.5k of 200k tokens left today',
      'the line says what the turn left'
    );
    expect(server.budgetQueries.length).toBeGreaterThan(asked);
    expect(find('.jp-AnalystBudget')!.getAttribute('data-low')).toBe('true');
  });

  it('shows nothing on a server without budgets', async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    await open(server, false);
    await until(() => server.budgetQueries.length > 0, 'the budget is asked for');
    await act(async () => {
      await nextTask();
    });
    expect(find('.jp-AnalystBudget')).toBeNull();
  });
});
