/**
 * An answer's receipts placed on its rendered markdown: each mark's text, found in the
 * rendered text at the same occurrence as in the answer's source (model/receipts.ts), is
 * wrapped in a link (a cited or derived number) or a marked span (an unsupported one).
 *
 * The markdown is rendered first and marked after, never split at the spans before: a span
 * inside a table, a list or emphasis would break the markdown around it. A mark whose text
 * the rendering shows a different number of times than the source writes it, or that runs
 * across two elements, is not placed: the answer then reads as written.
 */

import { placeInRendered } from '../../model';
import type { ShownMark } from './receiptWords';

/** What a placed mark carries: its kind, and its index in the marks given. */
export const RECEIPT = 'data-receipt';
export const MARK_INDEX = 'data-mark';

/** Text left as it is: inside a link of the answer's own (no link inside a link), code, formulas. */
const LEFT_ALONE = 'a, script, style, svg, math, mjx-container, .MathJax, [data-receipt]';

/** What starts a new line of the rendered text: cells and blocks do not run into each other. */
const BLOCK = 'p, li, td, th, h1, h2, h3, h4, h5, h6, pre, blockquote, dt, dd, caption, div';

/** What a mark is placed by: its text, and where it starts in the answer's source. */
export interface IPlaced {
  start: number;
  text: string;
}

/** Takes the marks placed on `root` off again, its text as it was. */
export function clearReceipts(root: HTMLElement): void {
  const placed = root.querySelectorAll(`[${RECEIPT}]`);
  if (placed.length === 0) {
    return;
  }
  placed.forEach(mark => mark.replaceWith(...Array.from(mark.childNodes)));
  root.normalize();
}

/** The text nodes of `root` that marks may go on, in document order. */
function markableText(root: HTMLElement): Text[] {
  const out: Text[] = [];
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    const alone = node.parentElement?.closest(LEFT_ALONE);
    if (!alone || !root.contains(alone)) {
      out.push(node as Text);
    }
  }
  return out;
}

/** The element a mark is shown as. */
function markElement(doc: Document, mark: ShownMark, index: number): HTMLElement {
  const element = mark.kind === 'unsupported' ? doc.createElement('mark') : doc.createElement('a');
  element.setAttribute(RECEIPT, mark.kind);
  element.setAttribute(MARK_INDEX, String(index));
  element.setAttribute('aria-label', mark.label);
  if (mark.kind === 'unsupported') {
    element.className = 'jp-AnalystReceipt jp-AnalystReceipt-unsupported';
    // Focusable, so the keyboard reaches its explanation as the pointer does.
    element.setAttribute('tabindex', '0');
  } else {
    element.className = `jp-AnalystReceipt jp-AnalystReceipt-${mark.kind}`;
    element.setAttribute('href', '#');
    if (mark.kind === 'cited') {
      element.setAttribute('data-call-id', mark.callId);
    }
  }
  return element;
}

/**
 * Places `marks` (in the answer's order) on `root`, the rendered `source`, after taking any
 * placed before off; how many were placed. `make` makes the element a mark's text goes
 * into (it carries RECEIPT, so the marks are taken off again); a receipt's by default.
 */
export function placeReceipts(
  root: HTMLElement,
  source: string,
  marks: readonly ShownMark[]
): number;
export function placeReceipts<M extends IPlaced>(
  root: HTMLElement,
  source: string,
  marks: readonly M[],
  make: (doc: Document, mark: M, index: number) => HTMLElement
): number;
export function placeReceipts(
  root: HTMLElement,
  source: string,
  marks: readonly IPlaced[],
  make: (doc: Document, mark: IPlaced, index: number) => HTMLElement = (doc, mark, index) =>
    markElement(doc, mark as ShownMark, index)
): number {
  clearReceipts(root);
  if (marks.length === 0) {
    return 0;
  }
  const nodes = markableText(root);
  const starts: number[] = [];
  let rendered = '';
  let block: Element | null | undefined;
  for (const node of nodes) {
    // A table's cells "5" and "21.9" read as "5\n21.9", not as the one number "521.9".
    const inside = node.parentElement?.closest(BLOCK);
    if (block !== undefined && inside !== block) {
      rendered += '\n';
    }
    block = inside;
    starts.push(rendered.length);
    rendered += node.data;
  }
  const at = placeInRendered(source, rendered, marks);
  // Last first: splitting a text node keeps the offsets of the marks before it.
  const placed: { node: Text; offset: number; mark: number }[] = [];
  at.forEach((offset, mark) => {
    if (offset === null) {
      return;
    }
    const end = offset + marks[mark].text.length;
    const n = nodes.findIndex(
      (node, i) => starts[i] <= offset && offset < starts[i] + node.data.length
    );
    if (n >= 0 && end <= starts[n] + nodes[n].data.length) {
      placed.push({ node: nodes[n], offset: offset - starts[n], mark });
    }
  });
  const doc = root.ownerDocument;
  for (const { node, offset, mark } of placed.reverse()) {
    const text = node.splitText(offset);
    text.splitText(marks[mark].text.length);
    const element = make(doc, marks[mark], mark);
    text.replaceWith(element);
    element.appendChild(text);
  }
  return placed.length;
}
