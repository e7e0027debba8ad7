/**
 * An answer's receipts in the conversation: a cited number is a link named by its step and
 * cell, which brings that step's card into view (unfolded, focused) and marks the cell in
 * its table; a derived number says what it follows from; an unsupported one is marked. A
 * receipt that does not fit (out of range, overlapping, an unknown step) leaves the answer
 * as written. The marks also go on rendered markdown, at the right occurrence, or not at all.
 */

import * as React from 'react';
import { act } from 'react';

import { DataTable } from '../../components/artifacts/DataTable';
import { clearReceipts, placeReceipts } from '../../components/receipts/markAnswer';
import { type ShownMark } from '../../components/receipts/receiptWords';
import { TurnList } from '../../components/TurnList';
import { AnalystContext } from '../../context';
import { type Citation, type UnsupportedClaim } from '../../model';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { mountedRoot } from '../dom';
import { FakeServer } from '../fakeServer';
import { eventsOf } from '../helpers';

const mounted = mountedRoot();

const ANSWER =
  'Frontier had the worst delay, **21.9** min, against 17.7 for Spirit: 4.2 min more. ' +
  'Its planes flew 1,620 flights, and 38% of them were late.';

const COLUMNS = [
  { name: 'carrier', type: 'VARCHAR' },
  { name: 'avg_delay', type: 'DOUBLE' }
];
const SAMPLE = [
  { carrier: 'Delta', avg_delay: 9.1 },
  { carrier: 'Spirit', avg_delay: 17.7 },
  { carrier: 'United', avg_delay: 12.4 },
  { carrier: 'Frontier', avg_delay: 21.92 }
];

/** A citation of `text` (its first occurrence) in the answer. */
function cite(text: string, extra: Partial<Citation> = {}): Citation {
  const start = ANSWER.indexOf(text);
  return {
    start,
    end: start + text.length,
    text,
    kind: 'number',
    value: text,
    call_id: 'call_sql',
    artifact_id: 'art_sql',
    row: null,
    column: null,
    derived: null,
    ...extra
  };
}

const CITATIONS: Citation[] = [
  cite('Frontier', { kind: 'name', value: 'Frontier', row: 3, column: 'carrier' }),
  cite('21.9', { value: 21.92, row: 3, column: 'avg_delay' }),
  cite('17.7', { value: 17.7, row: 1, column: 'avg_delay' }),
  cite('4.2', {
    value: 4.22,
    call_id: null,
    artifact_id: null,
    derived: { operation: 'difference', of: [1, 2], cells: [] }
  }),
  cite('1,620', { value: 1620, call_id: 'call_py', artifact_id: null, column: 'flights' })
];
const UNSUPPORTED: UnsupportedClaim[] = [
  {
    start: ANSWER.indexOf('38%'),
    end: ANSWER.indexOf('38%') + 3,
    text: '38%',
    kind: 'percent',
    value: 38
  }
];

/** A turn that queried (a reused step: its card comes folded), computed, and answered. */
function turnEvents(citations: unknown[] = CITATIONS, unsupported: unknown[] = UNSUPPORTED) {
  return eventsOf([
    {
      type: 'turn_started',
      prompt: 'Which carrier had the worst delay?',
      model: 'm',
      rerun: false
    },
    {
      type: 'tool_call',
      call_id: 'call_sql',
      tool: 'run_sql',
      arguments: { name: 'worst_delay', sql: 'select carrier, avg(delay) as avg_delay from f' },
      step_key: 'step:1'
    },
    {
      type: 'artifact',
      artifact_id: 'art_sql',
      name: 'worst_delay',
      artifact_type: 'dataset',
      fingerprint: 'sha256:1',
      created: false,
      call_id: 'call_sql'
    },
    {
      type: 'tool_result',
      call_id: 'call_sql',
      tool: 'run_sql',
      status: 'ok',
      reused: true,
      result: {
        dataset: 'worst_delay',
        artifact_id: 'art_sql',
        rows: 4,
        columns: COLUMNS,
        sample: SAMPLE
      },
      artifact_ids: ['art_sql']
    },
    {
      type: 'tool_call',
      call_id: 'call_py',
      tool: 'run_python',
      arguments: { code: '# flights of the worst carrier\nprint(len(f))' },
      step_key: 'step:2'
    },
    {
      type: 'tool_result',
      call_id: 'call_py',
      tool: 'run_python',
      status: 'ok',
      result: { stdout: '1620\n', reused: false, artifacts: [] }
    },
    { type: 'text_delta', text: ANSWER },
    { type: 'answer', text: ANSWER, flagged: [] },
    {
      type: 'turn_ended',
      status: 'completed',
      message: null,
      counters: { executed: 1, reused: 1 },
      ledger: null,
      citations,
      unsupported
    }
  ]);
}

/** The conversation of the turn, live (effects run), its table previews arrived. */
async function conversation(events = turnEvents()): Promise<HTMLElement> {
  const client = new FakeServer([]).client();
  Object.assign(client, {
    preview: async () => ({
      data: { 'text/plain': 'the table' },
      metadata: { columns: COLUMNS, sample: SAMPLE, rows: 4 }
    })
  });
  act(() =>
    mounted.root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <TurnList view={reduceAll(initialThreadView(), events)} threadId="thr_1" />
      </AnalystContext.Provider>
    )
  );
  await act(async () => undefined);
  return mounted.host();
}

const answerCard = (host: HTMLElement): HTMLElement =>
  host.querySelector<HTMLElement>('[data-card="answer"]')!;
const marks = (host: HTMLElement): string[] =>
  [...answerCard(host).querySelectorAll('[data-receipt]')].map(
    m =>
      `${m.tagName.toLowerCase()} ${m.getAttribute('data-receipt')}: ${m.getAttribute('aria-label')}`
  );

describe('an answer with receipts', () => {
  it('links each cited number, says what a derived one follows from, and marks an unsupported one', async () => {
    const host = await conversation();
    expect(marks(host)).toEqual([
      "a cited: Frontier — from step 1 'worst_delay', row 4, column carrier",
      "a cited: 21.9 — from step 1 'worst_delay', row 4, column avg_delay",
      "a cited: 17.7 — from step 1 'worst_delay', row 2, column avg_delay",
      'a derived: 4.2 — derived: difference of 21.9 and 17.7',
      "a cited: 1,620 — from step 2 'flights of the worst carrier', column flights",
      'mark unsupported: 38% — no step shows this number'
    ]);
    // The answer reads as written: the marks only wrap its text.
    expect(answerCard(host).querySelector('.jp-AnalystText-body')?.textContent).toBe(ANSWER);
    const links = answerCard(host).querySelectorAll<HTMLAnchorElement>('a[data-receipt]');
    expect([...links].every(a => a.getAttribute('href') !== null)).toBe(true);
    expect(answerCard(host).querySelector('.jp-AnalystReceipts-summary')?.textContent).toBe(
      'Receipts: 4 from their steps, 1 derived · 1 no step shows'
    );
  });

  it('shows the step and the cell on hover, and takes the tip away when the pointer leaves', async () => {
    const host = await conversation();
    const link = answerCard(host).querySelector<HTMLElement>('[aria-label^="21.9"]')!;
    act(() => {
      link.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    });
    const tip = answerCard(host).querySelector('.jp-AnalystReceipt-tip');
    expect([...(tip?.children ?? [])].map(line => line.textContent)).toEqual([
      'Step 1 · SQL · worst_delay',
      'Row 4, column avg_delay',
      'the result holds 21.92'
    ]);
    const flights = answerCard(host).querySelector<HTMLElement>('[aria-label^="1,620"]')!;
    act(() => {
      link.dispatchEvent(new MouseEvent('mouseout', { bubbles: true, relatedTarget: flights }));
      flights.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
    });
    // 1,620 is how the answer writes 1620: no "the result holds" for a separator.
    expect(
      [...answerCard(host).querySelector('.jp-AnalystReceipt-tip')!.children].map(
        l => l.textContent
      )
    ).toEqual(['Step 2 · Python · flights of the worst carrier', 'Column flights']);
    act(() => {
      flights.dispatchEvent(
        new MouseEvent('mouseout', { bubbles: true, relatedTarget: document.body })
      );
    });
    expect(answerCard(host).querySelector('.jp-AnalystReceipt-tip')).toBeNull();
    const unsupported = answerCard(host).querySelector<HTMLElement>('mark[data-receipt]')!;
    act(() => {
      unsupported.dispatchEvent(new FocusEvent('focusin', { bubbles: true }));
    });
    expect(
      answerCard(host).querySelector('.jp-AnalystReceipt-tip-unsupported')?.textContent
    ).toMatch(/^No step shows this number/);
  });

  it('brings the step’s card into view on a click: unfolded, focused, its cell marked', async () => {
    const host = await conversation();
    const sql = host.querySelector<HTMLElement>('[data-card="sql"]')!;
    expect(sql.querySelector<HTMLDetailsElement>('details.jp-AnalystCard-fold')?.open).toBe(false);
    const scrolled: Element[] = [];
    // jsdom lays nothing out: what would be scrolled into view is recorded instead.
    const jsdoms = Element.prototype.scrollIntoView;
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this);
    };
    const link = answerCard(host).querySelector<HTMLElement>('[aria-label^="21.9"]')!;
    const click = new MouseEvent('click', { bubbles: true, cancelable: true });
    act(() => {
      link.dispatchEvent(click);
    });
    expect(click.defaultPrevented).toBe(true); // no jump to the page's top
    expect(sql.classList.contains('jp-mod-cited')).toBe(true);
    expect(sql.querySelector<HTMLDetailsElement>('details.jp-AnalystCard-fold')?.open).toBe(true);
    expect(document.activeElement).toBe(sql);
    const cell = sql.querySelector('td.jp-mod-cited');
    expect(cell?.textContent).toBe('21.92');
    expect(cell?.closest('tr')?.getAttribute('data-row')).toBe('3');
    expect(scrolled).toEqual([cell]);
    Element.prototype.scrollIntoView = jsdoms;
    expect(host.querySelector('[data-card="python"]')?.classList.contains('jp-mod-cited')).toBe(
      false
    );

    // A derived number shows both numbers it follows from.
    act(() => {
      answerCard(host).querySelector<HTMLElement>('[data-receipt="derived"]')!.click();
    });
    expect([...sql.querySelectorAll('td.jp-mod-cited')].map(td => td.textContent)).toEqual([
      '17.70',
      '21.92'
    ]);
  });

  it('is reached by the keyboard: from the answer card, by Enter and the arrows', async () => {
    const host = await conversation();
    const card = answerCard(host);
    card.focus();
    const press = (key: string): void =>
      act(() => {
        document.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
      });
    press('Enter');
    // Without JupyterLab's renderer the answer is a <pre>, a control of its own: the next one.
    expect(document.activeElement?.tagName).toBe('PRE');
    press('ArrowDown');
    expect(document.activeElement?.getAttribute('aria-label')).toBe(
      "Frontier — from step 1 'worst_delay', row 4, column carrier"
    );
    press('ArrowDown');
    expect(document.activeElement?.textContent).toBe('21.9');
    expect(document.activeElement?.getAttribute('href')).toBe('#'); // a link: Enter follows it
  });

  it('leaves plain what does not fit: out of range, overlapping, an unknown step, a bad derivation', async () => {
    const host = await conversation(
      turnEvents(
        [
          { ...CITATIONS[1], start: ANSWER.length, end: ANSWER.length + 4 },
          { ...CITATIONS[1], call_id: 'call_elsewhere' },
          { ...CITATIONS[2], start: CITATIONS[2].start - 2 },
          CITATIONS[2],
          { ...cite('17.7 for'), call_id: 'call_sql' },
          { ...CITATIONS[3], derived: { operation: 'difference', of: [0, 9] } },
          { ...CITATIONS[4], derived: { operation: 'sum', of: [1, 3] } }
        ],
        [{ ...UNSUPPORTED[0], text: '39%' }]
      )
    );
    expect(marks(host)).toEqual([
      "a cited: 17.7 — from step 1 'worst_delay', row 2, column avg_delay"
    ]);
    expect(answerCard(host).querySelector('.jp-AnalystText-body')?.textContent).toBe(ANSWER);
  });

  it('marks the streamed answer in place when the turn’s end brings the receipts', async () => {
    const events = turnEvents();
    const host = await conversation(events.slice(0, -1));
    const body = answerCard(host).querySelector('.jp-AnalystText-body');
    expect(marks(host)).toEqual([]);
    await conversation(events);
    // The same rendered node, now marked: the answer was not rendered again (no jump).
    expect(answerCard(host).querySelector('.jp-AnalystText-body')).toBe(body);
    expect(marks(host)).toHaveLength(6);
  });

  it('says a number computed from cells the answer does not cite is derived from its step', async () => {
    const total = cite('1,620', {
      value: 1620,
      call_id: null,
      artifact_id: null,
      derived: {
        operation: 'total',
        of: null,
        cells: [0, 1].map(row => ({
          call_id: 'call_sql',
          artifact_id: 'art_sql',
          row,
          column: 'avg_delay'
        }))
      }
    });
    const host = await conversation(turnEvents([total], []));
    expect(marks(host)).toEqual([
      "a cited: 1,620 — derived: total of column avg_delay, rows 1, 2 of step 1 'worst_delay'"
    ]);
  });

  it('shows the answer as before when the turn has no receipts', async () => {
    const host = await conversation(turnEvents([], []));
    expect(marks(host)).toEqual([]);
    expect(answerCard(host).querySelector('.jp-AnalystReceipts-summary')).toBeNull();
    expect(answerCard(host).querySelector('.jp-AnalystText-body')?.textContent).toBe(ANSWER);
  });
});

describe('receipts on rendered markdown', () => {
  const mark = (start: number, text: string): ShownMark => ({
    kind: 'unsupported',
    start,
    text,
    label: `${text} — no step shows this number`,
    lines: []
  });

  function rendered(html: string): HTMLElement {
    const root = document.createElement('div');
    root.innerHTML = html;
    return root;
  }

  it('wraps the same occurrence as the source’s, across emphasis, tables and lists', () => {
    const source = 'Up **21.9** min.\n\n| a | b |\n|---|---|\n| 5 | 21.9 |\n\n- 21.9 again';
    const root = rendered(
      '<p>Up <strong>21.9</strong> min.</p><table><thead><tr><th>a</th><th>b</th></tr></thead>' +
        '<tbody><tr><td>5</td><td>21.9</td></tr></tbody></table><ul><li>21.9 again</li></ul>'
    );
    const text = root.textContent;
    const second = source.indexOf('21.9', source.indexOf('21.9') + 1);
    expect(
      placeReceipts(root, source, [mark(source.indexOf('5 |'), '5'), mark(second, '21.9')])
    ).toBe(2);
    expect(root.querySelector('td:last-child mark')?.textContent).toBe('21.9');
    expect(root.querySelector('td:first-child mark')?.textContent).toBe('5');
    expect(root.querySelector('strong mark')).toBeNull();
    expect(root.textContent).toBe(text);
  });

  it('places nothing inside a link of the answer’s own, nor across two elements', () => {
    const source = 'See [21.9](https://example.org) and 2**1.9**';
    const root = rendered(
      '<p>See <a href="https://example.org">21.9</a> and 2<strong>1.9</strong></p>'
    );
    expect(placeReceipts(root, source, [mark(5, '21.9')])).toBe(0);
    expect(root.querySelectorAll('[data-receipt]')).toHaveLength(0);
  });

  it('takes its marks off before placing again, the text whole', () => {
    const source = 'a 1 b 2';
    const root = rendered('<p>a 1 b 2</p>');
    placeReceipts(root, source, [mark(2, '1'), mark(6, '2')]);
    expect(root.querySelectorAll('[data-receipt]')).toHaveLength(2);
    placeReceipts(root, source, [mark(6, '2')]);
    expect([...root.querySelectorAll('[data-receipt]')].map(m => m.textContent)).toEqual(['2']);
    clearReceipts(root);
    expect(root.innerHTML).toBe('<p>a 1 b 2</p>');
  });
});

describe('a table with a cited cell', () => {
  it('marks the cell, and says when the cited row is past the rows it shows', () => {
    act(() =>
      mounted.root().render(
        <DataTable
          table={{ columns: COLUMNS, sample: SAMPLE, rows: 400 }}
          cited={[
            { row: 0, column: 'carrier' },
            { row: 41, column: 'avg_delay' }
          ]}
        />
      )
    );
    const host = mounted.host();
    expect([...host.querySelectorAll('td.jp-mod-cited')].map(td => td.textContent)).toEqual([
      'Delta'
    ]);
    expect(host.querySelector('td.jp-mod-cited')?.getAttribute('aria-current')).toBe('true');
    expect(host.querySelector('.jp-AnalystTable-citedPast')?.textContent).toBe(
      'The cited row 42 is past the rows shown here.'
    );
  });
});
