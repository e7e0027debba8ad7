/**
 * The chip above the prompt that says which notebook the question carries: its name, its
 * path and what following means on hover, a menu of the open notebooks, and detach; a
 * quiet "No notebook" once detached; nothing while no notebook is open.
 */

import * as React from 'react';
import { act } from 'react';

import { chipTitle, NotebookChip } from '../../components/NotebookChip';
import type { AttachChoice, IOpenNotebook } from '../../hooks/notebookAttachment';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

const A: IOpenNotebook = { id: 'nb-a', path: 'work/q3/analysis.ipynb', name: 'analysis.ipynb' };
const B: IOpenNotebook = { id: 'nb-b', path: 'scratch.ipynb', name: 'scratch.ipynb' };

interface ICalls {
  choose: string[];
  follow: number;
  detach: number;
}

function render(
  open: IOpenNotebook[],
  choice: AttachChoice,
  attached: IOpenNotebook | null
): ICalls {
  const calls: ICalls = { choose: [], follow: 0, detach: 0 };
  act(() =>
    mounted
      .root()
      .render(
        <NotebookChip
          open={open}
          choice={choice}
          attached={attached}
          onChoose={id => calls.choose.push(id)}
          onFollow={() => calls.follow++}
          onDetach={() => calls.detach++}
        />
      )
  );
  return calls;
}

const host = (): HTMLElement => mounted.host();
const chip = (): HTMLButtonElement =>
  host().querySelector<HTMLButtonElement>('.jp-AnalystAttach-chip')!;
const click = (element: Element): void =>
  act(() => {
    element.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
const menuItems = (): HTMLButtonElement[] =>
  Array.from(host().querySelectorAll<HTMLButtonElement>('[role="menuitemradio"]'));

describe('NotebookChip', () => {
  it('shows nothing while no notebook is open', () => {
    render([], { kind: 'follow' }, null);
    expect(host().innerHTML).toBe('');
  });

  it('names the notebook followed, its path and what following means on hover', () => {
    render([A, B], { kind: 'follow' }, A);
    expect(chip().textContent).toContain('analysis.ipynb');
    expect(chip().textContent).not.toContain('work/q3');
    expect(chip().title).toContain('work/q3/analysis.ipynb');
    expect(chip().title).toContain('follows the notebook in front');
    expect(host().querySelector('.jp-AnalystAttach')!.getAttribute('data-attached')).toBe(
      'work/q3/analysis.ipynb'
    );
  });

  it('says a chosen notebook stays attached whichever is in front', () => {
    expect(chipTitle({ kind: 'chosen', id: 'nb-b' }, B)).toMatch(
      /carries scratch\.ipynb.*stays attached whichever notebook is in front/
    );
  });

  it('detaches with its button', () => {
    const calls = render([A], { kind: 'follow' }, A);
    const detach = host().querySelector('button[aria-label="Detach analysis.ipynb"]')!;
    click(detach);
    expect(calls.detach).toBe(1);
  });

  it('offers the open notebooks, following the front and no notebook, the choice checked', () => {
    const calls = render([A, B], { kind: 'chosen', id: 'nb-b' }, B);
    expect(host().querySelector('[role="menu"]')).toBeNull();
    click(chip());
    expect(chip().getAttribute('aria-expanded')).toBe('true');
    expect(menuItems().map(i => i.textContent)).toEqual([
      'The notebook in front',
      'analysis.ipynb',
      'scratch.ipynb',
      'No notebook'
    ]);
    expect(menuItems().map(i => i.getAttribute('aria-checked'))).toEqual([
      'false',
      'false',
      'true',
      'false'
    ]);
    expect(menuItems()[1].title).toBe('work/q3/analysis.ipynb');
    click(menuItems()[1]);
    expect(calls.choose).toEqual(['nb-a']);
    // The menu closes on a choice.
    expect(host().querySelector('[role="menu"]')).toBeNull();

    click(chip());
    click(menuItems()[0]);
    expect(calls.follow).toBe(1);
    click(chip());
    act(() => {
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
    });
    expect(host().querySelector('[role="menu"]')).toBeNull();
  });

  it('says "No notebook" quietly once detached, and attaches again from its menu', () => {
    const calls = render([A], { kind: 'detached' }, null);
    expect(chip().textContent).toContain('No notebook');
    expect(chip().title).toMatch(/without a notebook/);
    expect(host().querySelector('.jp-AnalystAttach-detach')).toBeNull();
    click(chip());
    expect(menuItems()[0].textContent).toBe('The notebook in front');
    expect(menuItems()[2].getAttribute('aria-checked')).toBe('true');
    click(menuItems()[1]);
    expect(calls.choose).toEqual(['nb-a']);
  });

  it('names the followed notebook in the menu', () => {
    render([A, B], { kind: 'follow' }, A);
    click(chip());
    expect(menuItems()[0].textContent).toBe('The notebook in frontanalysis.ipynb');
    expect(menuItems()[0].querySelector('.jp-AnalystAttach-followed')!.textContent).toBe(
      'analysis.ipynb'
    );
    expect(menuItems()[0].getAttribute('aria-checked')).toBe('true');
  });
});
