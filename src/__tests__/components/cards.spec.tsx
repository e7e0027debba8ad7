/**
 * Specs of the conversation's rendering: the demo turn's cards from its events (data
 * attributes the browser tests rely on, the answer shown once, the reused badges of a
 * "continue"), the hover text of context usage, and the model strip. Rendered to static
 * markup: effects (fetching previews) do not run, rendermime is absent (plain text).
 */

import * as React from 'react';

import { AnalystApiError, IServerConfig } from '../../transport/api';
import { cardArtifacts } from '../../components/cards/cardArtifacts';
import { contextTitle } from '../../components/cards/contextTitle';
import { formatSize } from '../../components/cards/ArtifactCard';
import { ModelStrip, modelLine } from '../../components/ModelStrip';
import { answeredBy } from '../../components/Turn';
import { TurnList } from '../../components/TurnList';
import type { AnalystEvent, ToolResult } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView, type ThreadView, type ToolCard } from '../../model/view';
import { asApiError } from '../../hooks/useThread';
import { demoTurn } from '../helpers';
import { renderStatic } from '../staticMarkup';

const events = demoTurn();
const view = reduceAll(initialThreadView(), events);

/** The demo turn asked again: each step's result reused, no artifact recorded. */
function continued(): ThreadView {
  const last = events[events.length - 1].seq;
  const again = events
    .filter(e => e.type !== 'artifact')
    .map((e, i): AnalystEvent => {
      const moved = { ...e, seq: last + i + 1, turn_id: 'turn_again' } as AnalystEvent;
      return moved.type === 'tool_result'
        ? ({ ...moved, reused: true, duration_s: 0 } as ToolResult)
        : moved;
    });
  return reduceAll(view, again);
}

/**
 * What the ⓘ of a card's header explains: the text its button is described by (the size of
 * the prompt that asked for the step), or null when the card has none.
 */
function contextOf(card: Element | null): string | null {
  const icon = card?.querySelector('.jp-AnalystCard-header .jp-AnalystInfo-icon');
  const id = icon?.getAttribute('aria-describedby');
  return id ? (card?.querySelector(`[id="${id}"][role="tooltip"]`)?.textContent ?? null) : null;
}

describe('the conversation cards', () => {
  it('renders the demo turn: a card per step, the chart, the answer once', () => {
    const host = renderStatic(<TurnList view={view} threadId="thr_1" />);
    const turn = host.querySelector('.jp-AnalystTurn');
    expect(turn?.getAttribute('data-status')).toBe('completed');
    expect(host.querySelectorAll('[data-card="sql"]')).toHaveLength(1);
    expect(host.querySelectorAll('[data-card="python"]')).toHaveLength(1);
    expect(host.querySelectorAll('[data-card="tool"][data-tool="list_tables"]')).toHaveLength(1);
    expect(host.querySelectorAll('[data-card="chart"]')).toHaveLength(1);
    // The streamed answer and the answer event are one card.
    expect(host.querySelectorAll('[data-card="answer"]')).toHaveLength(1);
    expect(host.querySelectorAll('[data-card="text"]')).toHaveLength(1);
    const sql = host.querySelector('[data-card="sql"]');
    expect(sql?.getAttribute('data-status')).toBe('ok');
    expect(sql?.getAttribute('data-reused')).toBe('false');
    expect(sql?.querySelector('.jp-AnalystCard-shape')?.textContent).toContain(
      '60 rows × 3 columns'
    );
    // The prompt's size is behind the header's ⓘ, not a tooltip over the whole card.
    expect(contextOf(sql)).toMatch(/^Model call 2: 621 of 16,000 tokens/);
    expect(host.querySelectorAll('[data-card][title]')).toHaveLength(0);
    // The strip ends at its last state: "Completed" is said once, not again as the end.
    expect(host.querySelector('.jp-AnalystStates-end')).toBeNull();
    expect(host.querySelector('.jp-AnalystStates')?.textContent?.match(/Completed/g)).toHaveLength(
      1
    );
    expect(host.querySelector('.jp-AnalystTurn-summary')?.textContent).toBe('3 steps run');
    expect(
      [...host.querySelectorAll('.jp-AnalystStates-step')].map(s => s.getAttribute('data-state'))
    ).toEqual(
      events.filter(e => e.type === 'state').map(e => (e as { to_state: string }).to_state)
    );
  });

  it('marks every step and artifact of a "continue" as reused', () => {
    const again = continued();
    const host = renderStatic(<TurnList view={again} threadId="thr_1" />);
    const second = host.querySelectorAll('.jp-AnalystTurn')[1];
    const steps = second.querySelectorAll('[data-card="sql"], [data-card="python"]');
    expect(steps).toHaveLength(2);
    steps.forEach(step => expect(step.getAttribute('data-reused')).toBe('true'));
    const artifacts = second.querySelectorAll('[data-card="artifact"]');
    expect(artifacts.length).toBe(3);
    artifacts.forEach(a => expect(a.getAttribute('data-reused')).toBe('true'));
  });

  it("takes a reused step's artifacts from the thread's inventory", () => {
    const again = continued();
    const python = again.turns[1].items.find(
      (i): i is ToolCard => i.kind === 'tool' && i.tool === 'run_python'
    );
    expect(python).toBeDefined();
    const shown = cardArtifacts(python as ToolCard, again);
    expect(shown.map(a => a.artifact.name)).toEqual([
      'call_bd2af7481cda-figure-1.png',
      'outputs/revenue_by_region_month.csv'
    ]);
    expect(shown.every(a => a.reused && a.artifact.shortFingerprint.length === 12)).toBe(true);
  });

  it('says which text block is the answer only when it says the same', () => {
    const items = view.turns[0].items;
    expect(answeredBy(items)).toBe(items.findIndex(i => i.kind === 'text' && i.firstSeq === 21));
    const other = items.map(i => (i.kind === 'answer' ? { ...i, text: 'something else' } : i));
    expect(answeredBy(other)).toBeNull();
  });

  it('writes the context usage of a model call for the hover, as the estimate it is', () => {
    expect(contextTitle(view.turns[0].context[0])).toBe(
      'Model call 1: 507 of 16,000 tokens, estimated (rules 450, state 27, inventory 12, current 18)\n2 messages'
    );
  });

  it("says the model server's count first when it gave one, the estimate apart as the estimate", () => {
    // The demo turn again, its second model call's usage as told once the reply was in.
    const counted = events.map(e =>
      e.type === 'context_usage' && e.call === 2
        ? { ...e, prompt_tokens: 1234, completion_tokens: 56 }
        : e
    );
    const host = renderStatic(
      <TurnList view={reduceAll(initialThreadView(), counted)} threadId="thr_1" />
    );
    expect(contextOf(host.querySelector('[data-card="sql"]'))).toBe(
      'Model call 2: prompt 1,234 tokens · reply 56 tokens, counted by the model server\n' +
        'Estimated before sending: 621 of 16,000 tokens (rules 450, state 27, inventory 12, ' +
        'current 132)\n4 messages'
    );
    const [usage] = view.turns[0].context;
    expect(contextTitle({ ...usage, promptTokens: 1, completionTokens: null })).toBe(
      'Model call 1: prompt 1 token, counted by the model server\n' +
        'Estimated before sending: 507 of 16,000 tokens (rules 450, state 27, inventory 12, current 18)\n' +
        '2 messages'
    );
  });

  it('writes sizes as people read them', () => {
    expect(formatSize(1016)).toBe('1016 B');
    expect(formatSize(1331)).toBe('1.3 KB');
    expect(formatSize(65 * 1024 + 100)).toBe('65 KB');
    expect(formatSize(3 * 1024 * 1024)).toBe('3.0 MB');
  });
});

describe('the model strip', () => {
  const config = (model: Partial<IServerConfig['model']>): IServerConfig => ({
    version: '0.1.0',
    model: {
      configured: true,
      name: 'gpt-4o-mini',
      base_url: null,
      scripted: false,
      hint: null,
      ...model
    },
    sources: ['sales'],
    context: { configured: false },
    limits: {}
  });

  it('names the model and its endpoint, never a key', () => {
    expect(modelLine(config({ base_url: 'https://llm.example/v1' }))).toBe(
      'gpt-4o-mini at https://llm.example/v1'
    );
    expect(modelLine(config({ scripted: true, name: 'scripted' }))).toBe(
      'scripted model (offline, canned replies)'
    );
  });

  it('shows a banner with the fix when no model is configured', () => {
    const hint = "set OPENAI_API_KEY in the server's environment, then restart the server";
    const host = renderStatic(
      <ModelStrip config={config({ configured: false, name: null, hint })} />
    );
    const banner = host.querySelector('[role="alert"]');
    expect(banner?.getAttribute('data-reason')).toBe('no_model');
    expect(banner?.textContent).toContain('No model is configured');
    expect(banner?.textContent).toContain(hint);
  });
});

describe('a busy thread', () => {
  it('is said in plain words', () => {
    const busy = new AnalystApiError(409, {
      message: 'a turn is running',
      reason: 'turn_in_progress',
      hint: null
    });
    const shown = asApiError(busy);
    expect(shown?.message).toMatch(/^This thread is busy: a turn is already running on it/);
    expect(shown?.reason).toBe('turn_in_progress');
  });
});
