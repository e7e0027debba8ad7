import * as React from 'react';
import { act } from 'react';

import { Sidebar } from '../../components/Sidebar';
import { AnalystContext } from '../../context';
import { SEARCH_FROM, ThreadList, matching } from '../../components/ThreadList';
import { openThreadKey } from '../../hooks/useThreadList';
import type { AnalystClient, IThread } from '../../transport/api';
import { mountedRoot } from '../dom';
import { threadOf } from '../fakeServer';

const mounted = mountedRoot();

function render(element: React.ReactElement): void {
  act(() => mounted.root().render(element));
}

function typeInto(input: HTMLInputElement, text: string): void {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!;
  act(() => {
    setter.call(input, text);
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

function click(element: Element): void {
  act(() => {
    element.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
}

function byLabel(label: string): HTMLElement {
  const found = mounted.host().querySelector(`[aria-label="${label}"]`);
  if (!found) {
    throw new Error(`nothing labelled ${label}`);
  }
  return found as HTMLElement;
}

function titles(): string[] {
  return [...mounted.host().querySelectorAll('.jp-AnalystThreadList-title')].map(
    e => e.textContent ?? ''
  );
}

const THREADS = [
  threadOf('thr_1', 'Revenue by region'),
  threadOf('thr_2', 'Which product sells best?', { running: true }),
  threadOf('thr_3', null),
  threadOf('thr_4', 'Churn in the north', { source: 'crm' })
];

describe('ThreadList', () => {
  it('names a thread by its title, says which one is answering, and finds threads by words', () => {
    render(<ThreadList threads={THREADS} selected={null} onSelect={() => undefined} />);
    expect(titles()).toEqual([
      'Revenue by region',
      'Which product sells best?',
      'New thread',
      'Churn in the north'
    ]);
    const rows = mounted.host().querySelectorAll('.jp-AnalystThreadList-row');
    expect(rows[1].textContent).toContain('answering…');
    expect(rows[0].textContent).not.toContain('answering…');

    const search = byLabel('Search threads by title or source') as HTMLInputElement;
    typeInto(search, 'REVENUE region');
    expect(titles()).toEqual(['Revenue by region']);
    typeInto(search, 'crm');
    expect(titles()).toEqual(['Churn in the north']);
    typeInto(search, 'forecast');
    expect(mounted.host().textContent).toContain('No thread matches “forecast”.');
  });

  it('offers search only once the list is longer than a glance', () => {
    render(
      <ThreadList
        threads={THREADS.slice(0, SEARCH_FROM - 1)}
        selected={null}
        onSelect={() => undefined}
      />
    );
    expect(mounted.host().querySelector('input[type="search"]')).toBeNull();
    expect(matching(THREADS, '  ')).toEqual(THREADS);
  });

  it('renames in place, and Escape leaves the title as it was', async () => {
    const renamed: [string, string][] = [];
    const onRename = async (id: string, title: string): Promise<boolean> => {
      renamed.push([id, title]);
      return true;
    };
    render(
      <ThreadList
        threads={THREADS}
        selected={null}
        onSelect={() => undefined}
        onRename={onRename}
      />
    );
    click(byLabel('Rename “Revenue by region”'));
    const input = byLabel('New title for “Revenue by region”') as HTMLInputElement;
    expect(input.value).toBe('Revenue by region');
    typeInto(input, '  Revenue, 2024  ');
    await act(async () => {
      input.form!.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
    });
    expect(renamed).toEqual([['thr_1', 'Revenue, 2024']]);

    click(byLabel('Rename “Churn in the north”'));
    const other = byLabel('New title for “Churn in the north”') as HTMLInputElement;
    typeInto(other, 'something else');
    act(() => {
      other.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(renamed).toHaveLength(1);
    expect(titles()).toContain('Churn in the north');
  });

  it('deletes only after a confirmation, and never a thread that is answering', async () => {
    const deleted: string[] = [];
    const onDelete = async (id: string): Promise<boolean> => {
      deleted.push(id);
      return true;
    };
    render(
      <ThreadList
        threads={THREADS}
        selected={null}
        onSelect={() => undefined}
        onDelete={onDelete}
      />
    );
    expect((byLabel('Delete “Which product sells best?”') as HTMLButtonElement).disabled).toBe(
      true
    );

    click(byLabel('Delete “Revenue by region”'));
    expect(deleted).toEqual([]);
    const confirm = byLabel('Delete “Revenue by region”?');
    click([...confirm.querySelectorAll('button')].find(b => b.textContent === 'Cancel')!);
    expect(deleted).toEqual([]);

    click(byLabel('Delete “Revenue by region”'));
    await act(async () => {
      const box = byLabel('Delete “Revenue by region”?');
      [...box.querySelectorAll('button')]
        .find(b => b.textContent === 'Delete')!
        .dispatchEvent(new MouseEvent('click', { bubbles: true }));
    });
    expect(deleted).toEqual(['thr_1']);
  });
});

describe('Sidebar', () => {
  function fakeClient(threads: IThread[]): AnalystClient {
    return {
      settings: { baseUrl: 'http://127.0.0.1:8888/' },
      config: async () => ({
        version: '0',
        model: { configured: true, name: 'm', base_url: null, scripted: true, hint: null },
        sources: ['sales'],
        context: { configured: false },
        limits: {}
      }),
      sources: async () => [{ name: 'sales', kind: 'path' }],
      threads: async () => threads,
      thread: () => new Promise(() => undefined),
      events: async () => [],
      tables: async () => ({ source: 'sales', tables: [], more: 0, suggestions: [] }),
      artifacts: async () => []
    } as unknown as AnalystClient;
  }

  function inPanel(client: AnalystClient): React.ReactElement {
    return (
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <Sidebar client={client} />
      </AnalystContext.Provider>
    );
  }

  afterEach(() => window.localStorage.clear());

  it('returns to the thread that was open before a reload, if it is still there', async () => {
    const client = fakeClient(THREADS);
    window.localStorage.setItem(openThreadKey(client), 'thr_4');
    await act(async () => mounted.root().render(inPanel(client)));
    expect(mounted.host().querySelector('.jp-AnalystConversation-title')?.textContent).toBe(
      'Churn in the north'
    );
  });

  it('shows the list when the remembered thread is gone', async () => {
    const client = fakeClient(THREADS);
    window.localStorage.setItem(openThreadKey(client), 'thr_deleted');
    await act(async () => mounted.root().render(inPanel(client)));
    expect(mounted.host().querySelector('.jp-AnalystConversation-title')).toBeNull();
    expect(titles()).toHaveLength(4);
  });
});
