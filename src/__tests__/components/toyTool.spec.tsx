/**
 * A tool the panel is taught by registration alone: a made-up tool that makes a dataset
 * (`make_toy`) registers its model and its card, and the panel renders its card, its view of
 * the result, the name it binds and its "Insert as cell" action, with no other change (the
 * reducer and the result views ask the registry). A tool nobody registered gets the generic
 * card, and no action.
 */

import * as React from 'react';

import { ToolCardFrame } from '../../components/cards/ToolCardFrame';
import { StepActions } from '../../components/StepActions';
import { registerToolCard, unregisterCard, type IToolCardProps } from '../../components/tools';
import { TurnList } from '../../components/TurnList';
import { unregisterTool } from '../../model';
import { reduceAll } from '../../model/reducer';
import { findCard, initialThreadView } from '../../model/view';
import { eventsOf } from '../helpers';
import { renderStatic } from '../staticMarkup';

/** What the toy tool's result holds. */
interface IToyView {
  toys: number;
  colour: string;
}

function ToyCard({ card, detail, threadId, context }: IToolCardProps<IToyView>): JSX.Element {
  return (
    <ToolCardFrame kind="toy" card={card} context={context} subject={card.datasetName}>
      {detail && (
        <div className="toy-made">
          {detail.toys} {detail.colour} toys
        </div>
      )}
      <StepActions threadId={threadId} callId={card.callId} tool={card.tool} status={card.status} />
    </ToolCardFrame>
  );
}

beforeAll(() =>
  registerToolCard<IToyView>({
    tool: 'make_toy',
    label: 'Toy maker',
    parse: r =>
      typeof r.toys === 'number' && typeof r.colour === 'string'
        ? { toys: r.toys, colour: r.colour }
        : null,
    makesCell: true,
    binds: args => (typeof args.name === 'string' ? args.name : undefined),
    Card: ToyCard
  })
);

afterAll(() => {
  unregisterCard('make_toy');
  unregisterTool('make_toy');
});

const EVENTS = eventsOf([
  { type: 'turn_started', prompt: 'make toys', model: 'scripted', rerun: false },
  { type: 'tool_call', call_id: 'call_toy', tool: 'make_toy', arguments: { name: 'red_toys' } },
  {
    type: 'tool_result',
    call_id: 'call_toy',
    tool: 'make_toy',
    status: 'ok',
    result: { toys: 3, colour: 'red' }
  },
  { type: 'tool_call', call_id: 'call_other', tool: 'make_other', arguments: { name: 'x' } },
  {
    type: 'tool_result',
    call_id: 'call_other',
    tool: 'make_other',
    status: 'ok',
    result: { toys: 1, colour: 'blue' }
  },
  { type: 'turn_ended', status: 'completed' }
]);

describe('a tool registered by the panel alone', () => {
  // Reduced in each test: the registration comes before (beforeAll), as the panel's does.
  let view = initialThreadView();
  beforeEach(() => {
    view = reduceAll(initialThreadView(), EVENTS);
  });

  it('is read by its own model: its view of the result and the name it binds', () => {
    const card = findCard(view, 'call_toy');
    expect(card?.result?.view).toEqual({ toys: 3, colour: 'red' });
    expect(card?.datasetName).toBe('red_toys');
    // Not registered: no view, no binding.
    expect(findCard(view, 'call_other')?.result?.view).toBeNull();
    expect(findCard(view, 'call_other')?.datasetName).toBeUndefined();
  });

  it('renders its own card, its label and its action', () => {
    const host = renderStatic(<TurnList view={view} threadId="thr_1" />);
    const toy = host.querySelector('[data-tool="make_toy"]');
    expect(toy?.getAttribute('data-card')).toBe('toy');
    expect(toy?.querySelector('.jp-AnalystCard-tool')?.textContent).toContain('Toy maker');
    expect(toy?.querySelector('.jp-AnalystCard-subject')?.textContent).toBe('red_toys');
    expect(toy?.querySelector('.toy-made')?.textContent).toBe('3 red toys');
    expect(toy?.querySelector('.jp-AnalystStepActions-insert')?.textContent).toBe('Insert as cell');
    const other = host.querySelector('[data-tool="make_other"]');
    expect(other?.getAttribute('data-card')).toBe('tool');
    expect(other?.querySelector('.jp-AnalystCard-tool')?.textContent).toContain('make_other');
    expect(other?.querySelector('.jp-AnalystStepActions-insert')).toBeNull();
  });
});
