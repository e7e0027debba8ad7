/**
 * The `plan` tool: several steps in one call. Its card shows the plan as its events tell it
 * (`plan`, `plan_step`); its result counts what succeeded.
 */

import { count, defined, objects, text } from './read';
import { builtin, type ViewOf } from './view';

export type PlanResultView = ViewOf<'plan', 'steps'>;
type PlanStep = PlanResultView['steps'][number];

export const PLAN = builtin<'plan', PlanResultView>({
  tool: 'plan',
  label: 'Plan',
  parse: r =>
    Array.isArray(r.steps)
      ? defined<PlanResultView>({
          steps: objects(r.steps).map(s => ({
            step: count(s.step) ?? 0,
            id: text(s.id) ?? '',
            tool: text(s.tool) ?? '',
            does: text(s.does) ?? '',
            status: (text(s.status) ?? 'pending') as PlanStep['status']
          })),
          succeeded: count(r.succeeded),
          failed: count(r.failed),
          skipped: count(r.skipped),
          note: text(r.note)
        })
      : null
});
