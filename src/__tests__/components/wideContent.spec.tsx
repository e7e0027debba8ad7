/**
 * A block wider than its card says so: printed text keeps its lines (a printed DataFrame's
 * columns stay aligned) and scrolls sideways, and a table or text cut at the right edge shows
 * a cue under it, counting a table's columns out of sight, gone once scrolled to the end.
 */

import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import { act } from 'react';

import { DataTable } from '../../components/artifacts/DataTable';
import { Code } from '../../components/Markdown';
import { AnalystContext } from '../../context';
import { AnalystClient } from '../../transport/api';
import { Printed } from '../../components/WideBlock';
import { wideContent, wideCue } from '../../hooks/useWideContent';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

/** Lays `node` out as a browser would: `width` of content in a box `box` wide. */
function layOut(node: HTMLElement, width: number, box: number): void {
  Object.defineProperty(node, 'scrollWidth', { configurable: true, value: width });
  Object.defineProperty(node, 'clientWidth', { configurable: true, value: box });
}

function scrollTo(node: HTMLElement, left: number): void {
  act(() => {
    node.scrollLeft = left;
    node.dispatchEvent(new Event('scroll'));
  });
}

describe('what lies past the right edge', () => {
  it('counts the columns not wholly in sight, and nothing once scrolled to the end', () => {
    const columns = [100, 200, 400, 600];
    expect(wideContent({ scrollWidth: 600, clientWidth: 250, scrollLeft: 0 }, columns)).toEqual({
      more: true,
      columns: 2
    });
    expect(wideContent({ scrollWidth: 600, clientWidth: 250, scrollLeft: 200 }, columns)).toEqual({
      more: true,
      columns: 1
    });
    expect(wideContent({ scrollWidth: 600, clientWidth: 250, scrollLeft: 350 }, columns).more).toBe(
      false
    );
    // A pixel of rounding is not "more".
    expect(wideContent({ scrollWidth: 251, clientWidth: 250, scrollLeft: 0 }).more).toBe(false);
  });

  it('says it in words', () => {
    expect(wideCue({ more: true, columns: 3 })).toBe('3 more columns → scroll sideways');
    expect(wideCue({ more: true, columns: 1 })).toBe('1 more column → scroll sideways');
    expect(wideCue({ more: true, columns: 0 })).toBe('Wider than the card → scroll sideways');
    expect(wideCue({ more: false, columns: 0 })).toBe('');
  });
});

describe('printed text', () => {
  const FRAME =
    '   region   month  revenue\n0  Central  2024-01  1234.5\n1  East     2024-01  987.0';

  it('keeps its lines, and cues a line past the edge until scrolled to its end', () => {
    act(() => mounted.root().render(<Printed className="jp-AnalystCard-stdout" text={FRAME} />));
    const pre = mounted.host().querySelector('pre')!;
    expect(pre.classList.contains('jp-AnalystPrinted')).toBe(true);
    expect(pre.textContent).toBe(FRAME);
    expect(mounted.host().querySelector('.jp-AnalystWideCue')).toBeNull();

    layOut(pre, 480, 220);
    scrollTo(pre, 0);
    expect(mounted.host().querySelector('.jp-AnalystWideCue')?.textContent).toBe(
      'Wider than the card → scroll sideways'
    );
    scrollTo(pre, 260);
    expect(mounted.host().querySelector('.jp-AnalystWideCue')).toBeNull();
  });
});

describe('a wide table', () => {
  it('counts its columns past the edge under it', () => {
    const table = {
      columns: ['region', 'month', 'revenue', 'orders'].map(name => ({ name, type: 'VARCHAR' })),
      sample: [{ region: 'Central', month: '2024-01', revenue: '1', orders: '2' }],
      rows: 1
    };
    act(() => mounted.root().render(<DataTable table={table} />));
    const scroll = mounted.host().querySelector<HTMLElement>('.jp-AnalystTable-scroll')!;
    const lefts = [0, 100, 200, 300];
    Array.from(scroll.querySelectorAll('th')).forEach((th, i) => {
      th.getBoundingClientRect = () => ({ left: lefts[i], right: lefts[i] + 100 }) as DOMRect;
    });
    layOut(scroll, 400, 220);
    scrollTo(scroll, 0);
    expect(scroll.getAttribute('data-wide')).toBe('true');
    const cue = mounted.host().querySelector('.jp-AnalystWideCue')!;
    expect(cue.textContent).toBe('2 more columns → scroll sideways');
    expect(cue.getAttribute('data-columns')).toBe('2');
  });
});

describe('a code block', () => {
  it('cues a line past the edge of the block its renderer draws', () => {
    const sql =
      'SELECT r.region, COUNT(*) AS orders FROM orders o JOIN regions r ON o.region_id = r.region_id';
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    act(() =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <Code code={sql} language="sql" />
        </AnalystContext.Provider>
      )
    );
    const pre = mounted.host().querySelector<HTMLElement>('.jp-AnalystCode-frame pre')!;
    expect(mounted.host().querySelector('.jp-AnalystWideCue')).toBeNull();
    layOut(pre, 640, 220);
    scrollTo(pre, 0);
    expect(mounted.host().querySelector('.jp-AnalystWideCue')?.textContent).toBe(
      'Wider than the card → scroll sideways'
    );
  });
});
