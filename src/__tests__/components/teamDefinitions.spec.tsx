/**
 * The team's definitions in a turn: those its answer followed, named with their file, and
 * "Save as a definition" of a measure the folder lacks: the file shown first (nothing
 * written), saved only on "Save", or left on "Cancel"; a refusal says who may.
 */
import * as React from 'react';
import { act } from 'react';

import { ServerConnection } from '@jupyterlab/services';

import { DefinitionsUsed, SuggestedDefinition } from '../../components/TeamDefinitions';
import { AnalystContext } from '../../context';
import type { SavedMetric } from '../../model/definitions';
import type { MetricSuggestion } from '../../model/events';
import { AnalystApiError, AnalystClient } from '../../transport/api';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

const SUGGESTION: MetricSuggestion = {
  name: 'units_shipped',
  table: 'orders',
  agg: 'sum',
  expr: 'quantity',
  filters: ['quantity > 0'],
  measure: 'SUM(quantity) FROM orders WHERE quantity > 0',
  call_id: 'call_1',
  dialect: 'duckdb'
};
const SAVED: SavedMetric = {
  name: 'units_shipped',
  file: 'models/units_shipped.yml',
  yaml: 'semantic_models:\n- name: units_shipped_measures\n',
  definition: 'SUM(quantity) FROM orders WHERE quantity > 0',
  written: false
};

const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function mount(answers: Array<() => Response>): string[] {
  const client = new AnalystClient(
    ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
  );
  const calls: string[] = [];
  jest.spyOn(client, 'request').mockImplementation(async (path, init) => {
    calls.push(`${init?.method ?? 'GET'} ${path} ${String(init?.body ?? '')}`);
    return answers.shift()!();
  });
  act(() =>
    mounted.root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <SuggestedDefinition threadId="thr_1" turn={2} index={0} suggestion={SUGGESTION} />
      </AnalystContext.Provider>
    )
  );
  return calls;
}

const button = (selector: string): HTMLButtonElement | null =>
  mounted.host().querySelector<HTMLButtonElement>(selector);

describe('Save as a definition', () => {
  it('shows the file first, and writes it only on Save', async () => {
    const calls = mount([() => json(SAVED), () => json({ ...SAVED, written: true }, 201)]);
    expect(mounted.host().textContent).toContain(
      'Not defined in the team’s context: SUM(quantity) FROM orders WHERE quantity > 0'
    );
    await act(async () => button('.jp-AnalystSuggestion-button')!.click());
    expect(calls).toEqual(['POST threads/thr_1/definitions/preview {"turn":2,"index":0}']);
    expect(mounted.host().querySelector('.jp-AnalystSuggestion-yaml')!.textContent).toBe(
      SAVED.yaml
    );
    expect(button('.jp-AnalystSuggestion-button')).toBeNull();
    await act(async () => button('.jp-AnalystSuggestion-save')!.click());
    expect(calls[1]).toBe('POST threads/thr_1/definitions {"turn":2,"index":0}');
    expect(mounted.host().querySelector('[role="status"]')!.textContent).toBe(
      'Saved as models/units_shipped.yml of the team’s context: SUM(quantity) FROM orders WHERE quantity > 0'
    );
    expect(button('.jp-AnalystSuggestion-button')).toBeNull();
  });

  it('writes nothing on Cancel, and offers it again', async () => {
    const calls = mount([() => json(SAVED)]);
    await act(async () => button('.jp-AnalystSuggestion-button')!.click());
    act(() => button('.jp-AnalystSuggestion-cancel')!.click());
    expect(mounted.host().querySelector('.jp-AnalystSuggestion-yaml')).toBeNull();
    expect(button('.jp-AnalystSuggestion-button')).not.toBeNull();
    expect(calls).toHaveLength(1);
  });

  it('says who may, when the user is not an editor', async () => {
    mount([
      () => {
        throw new AnalystApiError(403, {
          reason: 'not_a_context_editor',
          message: 'only the context folder’s editors may save definitions',
          hint: 'an administrator names them in c.AnalystApp.context_editors'
        });
      }
    ]);
    await act(async () => button('.jp-AnalystSuggestion-button')!.click());
    expect(mounted.host().querySelector('[role="status"]')!.textContent).toBe(
      'You may not save definitions: only the context folder’s editors may.'
    );
    expect(
      mounted.host().querySelector('.jp-AnalystSuggestion')!.getAttribute('data-outcome')
    ).toBe('refused');
  });
});

describe('the definitions an answer used', () => {
  it('names each with its file, and nothing when there are none', () => {
    act(() =>
      mounted.root().render(
        <DefinitionsUsed
          definitions={[
            {
              kind: 'definition',
              name: 'revenue',
              definition: 'metric',
              file: 'context/models/orders.yml:46',
              call_id: 'call_1'
            }
          ]}
        />
      )
    );
    expect(mounted.host().textContent).toBe(
      'Definitions used: metric revenue (context/models/orders.yml:46)'
    );
    act(() => mounted.root().render(<DefinitionsUsed definitions={[]} />));
    expect(mounted.host().textContent).toBe('');
  });
});
