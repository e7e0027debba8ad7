/**
 * A replaced cell's diff as drawn in the notebook: both views built, one shown, switched by
 * a named group of toggle buttons whose pressed state says which; the choice holds for the
 * diffs drawn after it.
 */

import type { IChangeShown } from '../../model';
import { diffView, preferredLayout, switchLayout } from '../../notebook/diffView';

const REPLACE: IChangeShown = {
  proposalId: 'prop_1',
  changeId: 'c2',
  op: 'replace',
  anchor: 'show',
  cellType: 'code',
  reason: 'print y with its name',
  lines: [
    { kind: 'del', text: 'y = 2' },
    { kind: 'add', text: 'y = 3' },
    { kind: 'same', text: 'print(y)' }
  ],
  run: 'ok',
  outputs: [],
  conflict: null,
  undefined: []
};

function pressed(view: HTMLElement): string[] {
  return Array.from(view.querySelectorAll('button')).map(
    b => `${b.textContent}:${b.getAttribute('aria-pressed')}`
  );
}

afterEach(() => {
  switchLayout('inline');
  document.body.innerHTML = '';
});

describe('a replaced cell’s diff', () => {
  it('is inline at first, the switch a group named after the change', () => {
    const view = diffView(REPLACE);
    const group = view.querySelector('[role="group"]')!;
    expect(group.getAttribute('aria-label')).toBe('Diff view: print y with its name');
    expect(pressed(view)).toEqual(['Inline:true', 'Side by side:false']);
    const inline = view.querySelector<HTMLElement>('.jp-AnalystProposal-diff')!;
    expect(inline.hidden).toBe(false);
    expect(Array.from(inline.children).map(l => l.textContent)).toEqual([
      '- y = 2',
      '+ y = 3',
      '  print(y)'
    ]);
    expect(view.querySelector<HTMLElement>('.jp-AnalystProposal-split')!.hidden).toBe(true);
  });

  it('shows the cell now beside the cell as proposed, a row per line', () => {
    const view = diffView(REPLACE, 'split');
    const table = view.querySelector('table')!;
    expect(table.getAttribute('aria-label')).toBe('The cell now and as proposed');
    expect(Array.from(table.querySelectorAll('th')).map(th => [th.textContent, th.scope])).toEqual([
      ['Now', 'col'],
      ['Proposed', 'col']
    ]);
    const rows = Array.from(table.tBodies[0].rows).map(r =>
      Array.from(r.cells).map(c => `${c.className.split(' ')[1]} ${c.textContent}`)
    );
    expect(rows).toEqual([
      ['jp-mod-del - y = 2', 'jp-mod-add + y = 3'],
      ['jp-mod-same   print(y)', 'jp-mod-same   print(y)']
    ]);
    expect(table.hidden).toBe(false);
    expect(view.querySelector<HTMLElement>('.jp-AnalystProposal-diff')!.hidden).toBe(true);
  });

  it('switches every diff on the page, keeps the focus, and draws the next ones so', () => {
    const first = diffView(REPLACE);
    const second = diffView({ ...REPLACE, changeId: 'c3' });
    document.body.append(first, second);
    const toSplit = first.querySelector<HTMLButtonElement>('button[data-layout="split"]')!;
    toSplit.focus();
    toSplit.click();
    expect(pressed(first)).toEqual(['Inline:false', 'Side by side:true']);
    expect(pressed(second)).toEqual(['Inline:false', 'Side by side:true']);
    expect(second.querySelector<HTMLElement>('table')!.hidden).toBe(false);
    expect(document.activeElement).toBe(toSplit);
    expect(preferredLayout()).toBe('split');
    expect(diffView(REPLACE).dataset.layout).toBe('split');
  });

  it('keeps the notebook’s keys off the cell beneath', () => {
    const view = diffView(REPLACE);
    document.body.append(view);
    const seen: string[] = [];
    document.body.addEventListener('keydown', event => seen.push(event.key));
    const button = view.querySelector('button')!;
    button.dispatchEvent(new KeyboardEvent('keydown', { key: 'd', bubbles: true }));
    expect(seen).toEqual([]);
  });
});
