/**
 * The Artifacts view names things as the cards do: a dataset by its name, a figure by its
 * number and step, the step that made it by its number (and question, once there are
 * several), never by a call id; ids and fingerprints behind "Details".
 */

import * as React from 'react';
import { act } from 'react';

import { ArtifactsPanel } from '../../components/artifacts';
import { inventoryTitle, madeBy } from '../../components/artifacts/format';
import { stepPlaces } from '../../components/cards/stepNames';
import { AnalystContext } from '../../context';
import { reduceAll } from '../../model/reducer';
import { initialThreadView, type TurnView } from '../../model/view';
import { AnalystClient, IArtifact } from '../../transport/api';
import { demoTurn } from '../helpers';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

/** The demo's turn: list_tables (step 1), run_sql (step 2), run_python (step 3). */
const turns: TurnView[] = reduceAll(initialThreadView(), demoTurn()).turns;
const SQL_CALL = 'call_82a65d016366';
const PYTHON_CALL = 'call_bd2af7481cda';

function artifact(
  id: string,
  name: string,
  type: IArtifact['type'],
  call: string | null,
  digit: string
): IArtifact {
  return {
    artifact_id: id,
    thread_id: 'thr_1',
    name,
    type,
    mime: type === 'image' ? 'image/png' : 'application/vnd.apache.parquet',
    created_at: '2026-11-23T20:58:55.523Z',
    source_call_id: call,
    producer: call === SQL_CALL ? 'sql' : 'python',
    logical_key: null,
    fingerprint: `sha256:${digit.repeat(64)}`,
    size: 2048
  } as IArtifact;
}

const INVENTORY = [
  artifact('art_c7426dd4105948e0', 'revenue_by_region', 'dataset', SQL_CALL, 'a'),
  artifact('art_4560369a1b9c442c', `${PYTHON_CALL}-figure-1.png`, 'image', PYTHON_CALL, 'b')
];

describe('names of the inventory', () => {
  const places = stepPlaces(turns);

  it('places each step of a thread by its question and number', () => {
    expect(places.get(SQL_CALL)).toEqual({ turn: 1, step: 2, prompt: turns[0].prompt });
    expect(places.get(PYTHON_CALL)?.step).toBe(3);
  });

  it('says a figure by its number and step, a dataset by its name', () => {
    expect(inventoryTitle(INVENTORY[1], places)).toBe('Figure 1 of step 3');
    expect(inventoryTitle(INVENTORY[0], places)).toBe('revenue_by_region');
  });

  it('says the step that made it, with its question once there are several', () => {
    expect(madeBy(INVENTORY[0], places, 1).text).toBe('step 2');
    expect(madeBy(INVENTORY[0], places, 2).text).toBe('step 2 of question 1');
    expect(madeBy(INVENTORY[0], places, 1).title).toContain(turns[0].prompt);
    // A step the view does not hold: by its tool, never its id.
    expect(madeBy({ source_call_id: 'call_gone', producer: 'sql' }, places, 1).text).toBe(
      'a SQL step'
    );
  });
});

describe('ArtifactsPanel', () => {
  const client = {
    artifacts: async () => INVENTORY
  } as unknown as AnalystClient;

  async function show(): Promise<HTMLElement> {
    await act(async () =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{
            client,
            rendermime: null,
            commands: null,
            notebooks: null
          }}
        >
          <ArtifactsPanel threadId="thr_1" running={false} turns={turns} />
        </AnalystContext.Provider>
      )
    );
    return mounted.host();
  }

  /** An item's text outside its details: what a reader sees at a glance. */
  function shown(item: Element): string {
    const copy = item.cloneNode(true) as Element;
    copy.querySelector('details')?.remove();
    return copy.textContent ?? '';
  }

  it('shows names and steps in words, no call id and no fingerprint', async () => {
    const host = await show();
    const items = Array.from(host.querySelectorAll('.jp-AnalystInventory-item'));
    expect(items).toHaveLength(2);
    const [dataset, figure] = items;
    expect(dataset.querySelector('.jp-AnalystInventory-item-name')!.textContent).toBe(
      'revenue_by_region'
    );
    expect(figure.querySelector('.jp-AnalystInventory-item-name')!.textContent).toBe(
      'Figure 1 of step 3'
    );
    expect(dataset.querySelector('.jp-AnalystInventory-item-step')!.textContent).toBe('step 2');
    for (const item of items) {
      expect(shown(item)).not.toMatch(/call_|art_|sha256|[0-9a-f]{12}/);
    }
  });

  it('keeps ids, the stored name and the fingerprint behind Details', async () => {
    const host = await show();
    const figure = host.querySelectorAll('.jp-AnalystInventory-item')[1];
    const details = figure.querySelector('details.jp-AnalystDetails')!;
    expect(details.hasAttribute('open')).toBe(false);
    expect(details.querySelector('summary')!.textContent).toBe('Details');
    const facts = Object.fromEntries(
      Array.from(details.querySelectorAll('dt')).map(dt => [
        dt.textContent,
        dt.nextElementSibling!.textContent
      ])
    );
    expect(facts).toEqual({
      'Stored as': `${PYTHON_CALL}-figure-1.png`,
      'Step id': PYTHON_CALL,
      'Artifact id': 'art_4560369a1b9c442c',
      Fingerprint: `sha256:${'b'.repeat(64)}`
    });
  });
});
