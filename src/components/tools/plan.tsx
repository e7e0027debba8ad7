import * as React from 'react';

import { PLAN, PLAN_STEP_LABEL, type PlanResultView, type PlanStepItem } from '../../model';
import { ToolCardFrame } from '../cards/ToolCardFrame';
import { ToolError } from '../cards/ToolError';
import { toolCard, type IToolCardProps } from './card';

/** One step of the plan: its id, what it does, what it needs, where it stands. */
function PlanStepRow({ step }: { step: PlanStepItem }): JSX.Element {
  const label = step.status === 'ok' && step.reused ? 'Reused' : PLAN_STEP_LABEL[step.status];
  return (
    <li
      className="jp-AnalystPlan-step"
      data-step-id={step.id}
      data-call-id={step.callId}
      data-status={step.status}
      data-reused={step.reused ? 'true' : 'false'}
    >
      <code className="jp-AnalystPlan-id">{step.id}</code>
      <span className="jp-AnalystPlan-summary">{step.summary}</span>
      {step.inputs.length > 0 && (
        <span className="jp-AnalystPlan-needs">needs {step.inputs.join(', ')}</span>
      )}
      <span className={`jp-AnalystPlan-status jp-AnalystPlan-status-${step.status}`}>{label}</span>
      {step.message && <div className="jp-AnalystPlan-why">{step.message}</div>}
    </li>
  );
}

/**
 * A staged plan: what it is for, its stages in order (queries of a "together" stage run at
 * the same time) and where each step stands. Each step's own card follows this one.
 */
export function PlanCard({ card, context }: IToolCardProps<PlanResultView>): JSX.Element {
  const plan = card.plan;
  const steps: PlanStepItem[] = plan
    ? ([] as PlanStepItem[]).concat(...plan.stages.map(s => s.steps))
    : [];
  const done = steps.filter(s => s.status === 'ok').length;
  return (
    <ToolCardFrame kind="plan" card={card} label="Plan" context={context}>
      {plan?.goal && <div className="jp-AnalystPlan-goal">{plan.goal}</div>}
      {plan && (
        <ol className="jp-AnalystPlan-stages">
          {plan.stages.map((stage, n) => (
            <li key={n} className="jp-AnalystPlan-stage" data-mode={stage.mode}>
              <span className="jp-AnalystPlan-mode">
                Stage {n + 1}: {stage.mode === 'parallel' ? 'together' : 'in order'}
              </span>
              <ul>
                {stage.steps.map(step => (
                  <PlanStepRow key={step.id} step={step} />
                ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
      {plan && card.status !== 'pending' && (
        <div className="jp-AnalystCard-summary">
          {done} of {steps.length} steps succeeded
        </div>
      )}
      {card.result?.error && <ToolError error={card.result.error} />}
    </ToolCardFrame>
  );
}

export const PLAN_CARD = toolCard(PLAN, PlanCard);
