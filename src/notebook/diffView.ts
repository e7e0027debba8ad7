/**
 * A replaced cell's source as the notebook shows it under the cell: inline (one column, each
 * line kept, removed or added) or side by side (the cell now beside the cell as proposed),
 * switched with a pair of toggle buttons. Both views are built, one hidden, so switching keeps
 * the keyboard where it is; the choice holds for every change drawn after it (a redraw, the
 * next proposal) until switched back.
 */

import { sideBySideRows, type DiffSide, type IChangeShown, type IDiffLine } from '../model';

export type DiffLayout = 'inline' | 'split';

/** The class of a change's diff, holding both views and the switch. */
export const DIFF_VIEW_CLASS = 'jp-AnalystProposal-diffView';

let preferred: DiffLayout = 'inline';

/** The layout new diffs are drawn in: the last one chosen. */
export function preferredLayout(): DiffLayout {
  return preferred;
}

export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

const MARKS: Record<IDiffLine['kind'], string> = { add: '+ ', del: '- ', same: '  ' };

/** The lines in one column, each marked `+`, `-` or blank (not by colour alone). */
export function inlineDiff(lines: IDiffLine[]): HTMLPreElement {
  const pre = element('pre', 'jp-AnalystProposal-diff');
  for (const line of lines) {
    pre.append(
      element('span', `jp-AnalystProposal-line jp-mod-${line.kind}`, MARKS[line.kind] + line.text)
    );
  }
  return pre;
}

function sideCell(side: DiffSide): HTMLTableCellElement {
  const cell = element('td', `jp-AnalystProposal-splitLine jp-mod-${side?.kind ?? 'empty'}`);
  cell.textContent = side === null ? '' : MARKS[side.kind] + side.text;
  return cell;
}

/** The cell now (left) beside the cell as proposed (right), a row per line. */
export function splitDiff(lines: IDiffLine[]): HTMLTableElement {
  const table = element('table', 'jp-AnalystProposal-split');
  table.setAttribute('aria-label', 'The cell now and as proposed');
  const head = table.createTHead().insertRow();
  for (const label of ['Now', 'Proposed']) {
    const th = element('th', '', label);
    th.scope = 'col';
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of sideBySideRows(lines)) {
    const tr = body.insertRow();
    tr.append(sideCell(row.before), sideCell(row.after));
  }
  return table;
}

function show(view: HTMLElement, layout: DiffLayout): void {
  view.dataset.layout = layout;
  view.querySelector<HTMLElement>('.jp-AnalystProposal-diff')!.hidden = layout !== 'inline';
  view.querySelector<HTMLElement>('.jp-AnalystProposal-split')!.hidden = layout !== 'split';
  view.querySelectorAll<HTMLButtonElement>('button[data-layout]').forEach(b => {
    b.setAttribute('aria-pressed', String(b.dataset.layout === layout));
  });
}

/** Switch every diff drawn in `root` (the page) to `layout`, and draw the next ones so. */
export function switchLayout(layout: DiffLayout, root: ParentNode = document): void {
  preferred = layout;
  root.querySelectorAll<HTMLElement>(`.${DIFF_VIEW_CLASS}`).forEach(view => show(view, layout));
}

function toggle(label: string, layout: DiffLayout): HTMLButtonElement {
  const node = element('button', 'jp-AnalystProposal-toggle', label);
  node.type = 'button';
  node.dataset.layout = layout;
  // The notebook's own keys (Enter, arrows, A, B, D...) must not act on the cell beneath.
  node.addEventListener('keydown', event => event.stopPropagation());
  node.addEventListener('click', event => {
    event.stopPropagation();
    switchLayout(layout, node.ownerDocument);
  });
  return node;
}

/** A replaced cell's diff: the switch (a group named after the change) and both views. */
export function diffView(change: IChangeShown, layout: DiffLayout = preferred): HTMLElement {
  const view = element('div', DIFF_VIEW_CLASS);
  const group = element('div', 'jp-AnalystProposal-layouts');
  group.setAttribute('role', 'group');
  group.setAttribute('aria-label', `Diff view: ${change.reason}`);
  group.append(toggle('Inline', 'inline'), toggle('Side by side', 'split'));
  view.append(group, inlineDiff(change.lines), splitDiff(change.lines));
  show(view, layout);
  return view;
}
