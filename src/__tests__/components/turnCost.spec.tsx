/**
 * The turn footer's cost: the model calls and tokens a turn used (how they were counted),
 * its cost only where the model has a price, and what reusing steps saved, all from the
 * ledger the `turn_ended` event carries; a turn closed without one shows none.
 */

import * as React from 'react';

import { money } from '../../components/TurnCost';
import { TurnList } from '../../components/TurnList';
import { parseEvent, type AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { eventsOf } from '../helpers';
import { renderStatic } from '../staticMarkup';

const TOKENS = { prompt_tokens: 0, completion_tokens: 0, counted_by: 'none', cost_usd: null };

function ledger(usage: object, saved: object = {}): object {
  return {
    usage: { ...TOKENS, calls: 0, ...usage },
    steps: 1,
    execution_s: 0.5,
    saved: { ...TOKENS, steps: 0, execution_s: 0, untracked: 0, ...saved },
    price: null
  };
}

/** One whole turn ending with `ended`'s fields, then the summarizer's events (`after`). */
function turn(
  ended: Record<string, unknown>,
  after: Record<string, unknown>[] = []
): AnalystEvent[] {
  const bodies: Record<string, unknown>[] = [
    { type: 'turn_started', prompt: 'revenue by region', model: 'm', rerun: false },
    { type: 'answer', text: 'North leads.', flagged: [] },
    {
      type: 'turn_ended',
      status: 'completed',
      message: null,
      counters: { executed: 1 },
      citations: [],
      unsupported: [],
      definitions: [],
      suggestions: [],
      ...ended
    },
    ...after
  ];
  return eventsOf(bodies);
}

function footer(
  ended: Record<string, unknown>,
  after: Record<string, unknown>[] = []
): Element | null {
  const host = renderStatic(
    <TurnList view={reduceAll(initialThreadView(), turn(ended, after))} threadId="thr_1" />
  );
  return host.querySelector('[data-summary="cost"]');
}

describe('the turn footer cost', () => {
  it('says the counted tokens and their cost at the configured price, and what reuse saved', () => {
    const shown = footer({
      ledger: ledger(
        {
          calls: 2,
          prompt_tokens: 2200,
          completion_tokens: 131,
          counted_by: 'server',
          cost_usd: 0.002462
        },
        {
          steps: 1,
          prompt_tokens: 500,
          completion_tokens: 51,
          counted_by: 'server',
          cost_usd: 0.000602,
          execution_s: 0.04
        }
      )
    });
    expect(shown?.querySelector('[data-cost="usage"]')?.textContent).toBe(
      '2 model calls · 2,200 prompt + 131 completion tokens (counted by the model server) · $0.002462'
    );
    expect(shown?.querySelector('[data-cost="saved"]')?.textContent).toBe(
      "Reuse saved 1 step's run: 0.04 s (it first cost 500 prompt + 51 completion tokens, $0.000602)"
    );
  });

  it('shows no cost without a price, says an estimate is one, and nothing saved when nothing was reused', () => {
    const shown = footer({
      ledger: ledger({
        calls: 1,
        prompt_tokens: 900,
        completion_tokens: 12,
        counted_by: 'estimate'
      })
    });
    expect(shown?.textContent).toBe('1 model call · 900 prompt + 12 completion tokens (estimated)');
    expect(shown?.textContent).not.toContain('$');
    expect(shown?.querySelector('[data-cost="saved"]')).toBeNull();
  });

  it('shows nothing for a turn that ended without its ledger, or with a malformed one', () => {
    expect(footer({})).toBeNull();
    expect(footer({ ledger: null })).toBeNull();
    // A ledger of the wrong shape is dropped with the rest of the frame: no made-up figure.
    expect(
      parseEvent({ seq: 1, type: 'turn_ended', status: 'completed', ledger: { usage: 3 } })
    ).toBeNull();
  });

  it("counts the summarizer's call after the answer, and says it apart", () => {
    const memory = (usage: object | null): Record<string, unknown> => ({
      type: 'memory',
      origin: 'summarizer',
      status: 'applied',
      version: 2,
      changes: {},
      summarized_through: 1,
      message: null,
      usage: usage === null ? null : { ...TOKENS, ...usage }
    });
    const answered = {
      calls: 2,
      prompt_tokens: 2200,
      completion_tokens: 131,
      counted_by: 'server',
      cost_usd: 0.002
    };
    const shown = footer({ ledger: ledger(answered) }, [
      memory({
        calls: 1,
        prompt_tokens: 800,
        completion_tokens: 40,
        counted_by: 'server',
        cost_usd: 0.0005
      })
    ]);
    expect(shown?.querySelector('[data-cost="usage"]')?.textContent).toBe(
      '3 model calls · 3,000 prompt + 171 completion tokens (counted by the model server) · $0.0025'
    );
    expect(shown?.querySelector('[data-cost="summarizer"]')?.textContent).toBe(
      "of which the thread's summary, updated after the answer: 1 model call · 800 prompt + " +
        '40 completion tokens (counted by the model server) · $0.0005'
    );
    // A summarizer that sent no call (nothing to summarize) adds nothing, and says nothing.
    const none = footer({ ledger: ledger(answered) }, [memory(null)]);
    expect(none?.querySelector('[data-cost="usage"]')?.textContent).toContain('2 model calls');
    expect(none?.querySelector('[data-cost="summarizer"]')).toBeNull();
    // A priced answer and an unpriced summary: no total cost is made up.
    const unpriced = footer({ ledger: ledger(answered) }, [
      memory({ calls: 1, prompt_tokens: 800, completion_tokens: 40, counted_by: 'estimate' })
    ]);
    expect(unpriced?.querySelector('[data-cost="usage"]')?.textContent).toBe(
      '3 model calls · 3,000 prompt + 171 completion tokens (partly estimated)'
    );
  });

  it('writes money as the CLI does', () => {
    expect([money(null), money(0), money(0.00023), money(1.5)]).toEqual([
      'no price',
      '$0',
      '$0.00023',
      '$1.50'
    ]);
  });
});
