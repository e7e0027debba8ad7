/**
 * Specs of a staged plan in the panel, from the events of a real plan turn (two queries and
 * a failing one together, then two Python steps in order, one of them not run because the
 * query it needs failed): the guard reads every event, the reducer puts the plan on its
 * card and each artifact on the card of the step that made it, and the plan card says
 * where each step stands.
 */

import * as React from 'react';

import { TurnList } from '../../components/TurnList';
import { parseEvent, type AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { findCard, initialThreadView, type PlanStepItem } from '../../model/view';
import planTurnJson from '../fixtures/plan-turn.json';
import { renderStatic } from '../staticMarkup';

const raw = planTurnJson as { [key: string]: unknown }[];
const events = raw.map(e => parseEvent(e)).filter((e): e is AnalystEvent => e !== null);
const view = reduceAll(initialThreadView(), events);
const plan = events.find(e => e.type === 'plan');
const planCallId = plan?.type === 'plan' ? plan.call_id : '';

describe('a staged plan', () => {
  it('reads every event of a real plan turn', () => {
    expect(events).toHaveLength(raw.length);
    expect(planCallId).not.toBe('');
  });

  it('refuses a plan event whose stages are not a plan', () => {
    const good = raw.find(e => e.type === 'plan') as { [key: string]: unknown };
    const stages = good.stages as { mode: string; steps: { [key: string]: unknown }[] }[];
    const badTool = [{ ...stages[0], steps: [{ ...stages[0].steps[0], tool: 'drop_table' }] }];
    expect(parseEvent({ ...good, stages: badTool })).toBeNull();
    expect(parseEvent({ ...good, stages: [{ mode: 'sideways', steps: [] }] })).toBeNull();
    expect(parseEvent({ ...good, stages: 'q1 then q2' })).toBeNull();
    const noInputs = [{ ...stages[0], steps: [{ ...stages[0].steps[0], inputs: [1] }] }];
    expect(parseEvent({ ...good, stages: noInputs })).toBeNull();
  });

  it('puts the plan on its card and tracks each step to its end', () => {
    const card = findCard(view, planCallId);
    expect(card?.tool).toBe('plan');
    expect(card?.status).toBe('error'); // one step failed, one was not run
    const steps: Record<string, PlanStepItem> = {};
    for (const stage of card?.plan?.stages ?? []) {
      for (const step of stage.steps) {
        steps[step.id] = step;
      }
    }
    expect(card?.plan?.stages.map(s => s.mode)).toEqual(['parallel', 'sequence']);
    const statuses: Record<string, string> = {};
    Object.keys(steps).forEach(id => (statuses[id] = steps[id].status));
    expect(statuses).toEqual({
      rev: 'ok',
      n: 'ok',
      bad: 'error',
      share: 'ok',
      uses_bad: 'skipped'
    });
    expect(steps.uses_bad.message).toContain("'bad'");
    expect(steps.bad.message).toContain('Conversion Error');
    expect(steps.share.inputs).toEqual(['rev', 'n']);
  });

  it('puts each artifact on the card of the step that made it, though the queries ran together', () => {
    expect(findCard(view, `${planCallId}.rev`)?.artifacts.map(a => a.name)).toEqual(['revenue']);
    expect(findCard(view, `${planCallId}.n`)?.artifacts.map(a => a.name)).toEqual(['order_count']);
    expect(findCard(view, `${planCallId}.bad`)?.artifacts).toEqual([]);
    const loose = view.turns[0].items.filter(i => i.kind === 'artifact');
    expect(loose).toEqual([]);
  });

  it('shows the plan: its stages, each step with where it stands, and why one was not run', () => {
    const host = renderStatic(<TurnList view={view} threadId="thr_1" />);
    const card = host.querySelector(`[data-card="plan"][data-call-id="${planCallId}"]`);
    expect(card).not.toBeNull();
    expect(card?.querySelector('.jp-AnalystPlan-goal')?.textContent).toBe(
      'average revenue per order'
    );
    const modes = Array.from(card?.querySelectorAll('.jp-AnalystPlan-stage') ?? []).map(s =>
      s.getAttribute('data-mode')
    );
    expect(modes).toEqual(['parallel', 'sequence']);
    const step = (id: string) => card?.querySelector(`[data-step-id="${id}"]`);
    expect(step('rev')?.getAttribute('data-status')).toBe('ok');
    expect(step('bad')?.querySelector('.jp-AnalystPlan-status')?.textContent).toBe('Failed');
    expect(step('uses_bad')?.querySelector('.jp-AnalystPlan-status')?.textContent).toBe('Not run');
    expect(step('uses_bad')?.querySelector('.jp-AnalystPlan-why')?.textContent).toContain(
      "needs 'bad'"
    );
    expect(step('share')?.querySelector('.jp-AnalystPlan-needs')?.textContent).toBe('needs rev, n');
    expect(card?.querySelector('.jp-AnalystCard-summary')?.textContent).toBe(
      '3 of 5 steps succeeded'
    );
    // Each step that ran has its own card after the plan's.
    expect(host.querySelectorAll('[data-card="sql"]')).toHaveLength(3);
    expect(host.querySelectorAll('[data-card="python"]')).toHaveLength(1);
  });

  it('marks steps reused when the plan is asked again', () => {
    const last = events[events.length - 1].seq;
    const again = events
      .filter(e => e.type === 'plan' || e.type === 'plan_step' || e.type === 'tool_call')
      .map((e, i): AnalystEvent => {
        const moved = { ...e, seq: last + i + 1, turn_id: 'turn_again' } as AnalystEvent;
        return moved.type === 'plan_step' && moved.status === 'ok'
          ? { ...moved, reused: true }
          : moved;
      });
    const host = renderStatic(<TurnList view={reduceAll(view, again)} threadId="thr_1" />);
    const cards = host.querySelectorAll(`[data-card="plan"]`);
    const second = cards[cards.length - 1];
    expect(second.querySelector('[data-step-id="rev"] .jp-AnalystPlan-status')?.textContent).toBe(
      'Reused'
    );
    expect(second.querySelector('[data-step-id="rev"]')?.getAttribute('data-reused')).toBe('true');
  });
});
