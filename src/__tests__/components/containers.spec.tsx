/**
 * The panel's containers mounted as JupyterLab mounts them, over a fake server (the API
 * client's calls, answered from the real demo turn's events): the conversation renders a
 * thread's turns from its events, Stop sends the interrupt and is disabled until the turn
 * ends, a busy thread says so and follows the running turn, and the sidebar goes from the
 * list to a conversation and back.
 */

import * as React from 'react';
import { act } from 'react';

import { Conversation } from '../../components/Conversation';
import { Sidebar } from '../../components/Sidebar';
import { StopButton } from '../../components/StopButton';
import { AnalystContext } from '../../context';
import type { AnalystClient, IThread } from '../../transport/api';
import { mountedRoot } from '../dom';
import { endedAt, FakeServer, threadOf } from '../fakeServer';
import { demoTurn } from '../helpers';

const mounted = mountedRoot();

function inPanel(client: AnalystClient, element: React.ReactElement): React.ReactElement {
  return (
    <AnalystContext.Provider value={{ client, rendermime: null, commands: null, notebooks: null }}>
      {element}
    </AnalystContext.Provider>
  );
}

/** `element` mounted in the panel's context, its first answers from the server applied. */
async function mount(client: AnalystClient, element: React.ReactElement): Promise<void> {
  await act(async () => {
    mounted.root().render(inPanel(client, element));
    await nextTask();
  });
}

/**
 * Lets the panel's promises run until `check` holds: each round, inside act(), until the
 * queue of promises is empty (the next task).
 */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let round = 0; round < 50; round++) {
    if (check()) {
      return;
    }
    await act(async () => {
      await nextTask();
    });
  }
  throw new Error(`never happened: ${what}`);
}

function find<E extends Element = HTMLElement>(selector: string): E | null {
  return mounted.host().querySelector<E>(selector);
}

function byLabel<E extends Element = HTMLElement>(label: string): E | null {
  return find<E>(`[aria-label="${label}"]`);
}

/** The next task: every promise queued until now has run (inside act(), as React wants). */
function nextTask(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}

/** A click, and what it set off applied. */
async function click(element: Element): Promise<void> {
  await act(async () => {
    element.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    await nextTask();
  });
}

/** A question typed into the prompt box and sent with Enter, as a person sends it. */
async function ask(text: string): Promise<void> {
  const box = byLabel<HTMLTextAreaElement>('Ask about your data');
  if (box === null) {
    throw new Error('no prompt box');
  }
  const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!;
  act(() => {
    setter.call(box, text);
    box.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await act(async () => {
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    await nextTask();
  });
}

const THREAD: IThread = threadOf('thr_1', 'Revenue by region');

describe('StopButton', () => {
  it('asks to stop once, and says it is stopping', async () => {
    let stops = 0;
    act(() => mounted.root().render(<StopButton stopping={false} onStop={() => (stops += 1)} />));
    const button = byLabel<HTMLButtonElement>('Stop the turn')!;
    expect(button.disabled).toBe(false);
    await click(button);
    expect(stops).toBe(1);
    act(() => mounted.root().render(<StopButton stopping={true} onStop={() => (stops += 1)} />));
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe('Stopping…');
    await click(button);
    expect(stops).toBe(1);
  });
});

describe('Conversation', () => {
  it("renders a thread's turns from its events, each card one tab stop", async () => {
    const server = new FakeServer([THREAD]);
    server.stored.set('thr_1', demoTurn());
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => find('.jp-AnalystTurn') !== null, 'the turn is shown');
    const turn = find('.jp-AnalystTurn')!;
    expect(turn.getAttribute('data-status')).toBe('completed');
    expect(turn.querySelector('.jp-AnalystTurn-prompt')?.textContent).toBe(
      'Revenue by region per month, with a chart'
    );
    expect(
      [...turn.querySelectorAll('[data-card]')]
        .filter(card => card.getAttribute('tabindex') === '0')
        .map(card => card.getAttribute('data-card'))
    ).toEqual(['text', 'tool', 'sql', 'python', 'answer']);
    expect(turn.querySelector('[data-card="answer"]')?.textContent).toContain(
      'Revenue by region per month is in the dataset'
    );
    // The history was read, and no turn runs: nothing is followed, Stop is not offered.
    await until(() => server.calls.includes('thread thr_1'), 'the thread is asked whether it runs');
    expect(server.calls).toEqual(['events thr_1 0', 'thread thr_1']);
    expect(byLabel('Stop the turn')).toBeNull();
  });

  it('sends the interrupt on Stop, is disabled until the turn ends, then gives the prompt the focus', async () => {
    const server = new FakeServer([THREAD]);
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => server.calls.includes('thread thr_1'), 'the thread is opened');
    await ask('Revenue by region per month, with a chart');
    await until(() => byLabel('Stop the turn') !== null, 'Stop is offered');
    expect(server.calls).toContain('POST turns thr_1');
    // The server has the question: the box is cleared.
    await until(
      () => byLabel<HTMLTextAreaElement>('Ask about your data')!.value === '',
      'the box is cleared'
    );

    const stop = byLabel<HTMLButtonElement>('Stop the turn')!;
    expect(stop.disabled).toBe(false);
    await click(stop);
    await until(() => server.calls.includes('cancel thr_1'), 'the interrupt is sent');
    await until(() => stop.disabled, 'Stop is disabled');
    expect(stop.textContent).toBe('Stopping…');
    expect(find('.jp-AnalystConversation-status')?.textContent).toBe('Stopping…');

    // The turn ends as stopped: Stop goes, the turn says so, the prompt has the focus back.
    server.endTurn('thr_1', endedAt(8, 'interrupted'));
    await until(() => byLabel('Stop the turn') === null, 'Stop goes once the turn ends');
    expect(find('.jp-AnalystTurn')?.getAttribute('data-status')).toBe('interrupted');
    expect(find('.jp-AnalystTurn-end')?.textContent).toBe('Stopped');
    expect(document.activeElement).toBe(byLabel('Ask about your data'));
    expect(server.calls.filter(call => call.startsWith('cancel'))).toEqual(['cancel thr_1']);
  });

  it('leaves the focus where the person went meanwhile when a turn ends', async () => {
    const server = new FakeServer([THREAD]);
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => server.calls.includes('thread thr_1'), 'the thread is opened');
    await ask('Revenue by region per month, with a chart');
    await until(() => byLabel('Stop the turn') !== null, 'the turn runs');
    // The person moves on to a notebook's cell (outside the panel) while the turn runs.
    const elsewhere = document.createElement('button');
    elsewhere.textContent = 'Accept';
    document.body.append(elsewhere);
    elsewhere.focus();
    server.endTurn('thr_1', endedAt(8, 'interrupted'));
    await until(() => byLabel('Stop the turn') === null, 'the turn ends');
    expect(document.activeElement).toBe(elsewhere);
    elsewhere.remove();
  });

  it('says a thread is busy with a turn started elsewhere, follows that turn and can stop it', async () => {
    const server = new FakeServer([THREAD]);
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => server.calls.includes('thread thr_1'), 'the thread is opened');
    server.startTurn('thr_1');
    await ask('count slowly');
    await until(() => find('.jp-AnalystBanner-error') !== null, 'the banner says why');
    expect(find('.jp-AnalystBanner-error')?.getAttribute('data-reason')).toBe('turn_in_progress');
    expect(find('.jp-AnalystBanner-error')?.textContent).toContain('This thread is busy');
    await until(() => server.calls.includes('GET events thr_1'), 'the running turn is followed');
    // The question was not taken: the box keeps it.
    expect(byLabel<HTMLTextAreaElement>('Ask about your data')!.value).toBe('count slowly');
    await click(byLabel('Stop the turn')!);
    await until(() => server.calls.includes('cancel thr_1'), 'the interrupt is sent');
    server.endTurn('thr_1', endedAt(8, 'interrupted'));
    await until(() => byLabel('Stop the turn') === null, 'the followed turn ends');
    expect(mounted.host().querySelectorAll('.jp-AnalystTurn')).toHaveLength(1);
  });
});

describe('an empty thread', () => {
  it("lists its source's tables and fills the prompt box with a suggested question", async () => {
    const server = new FakeServer([THREAD]);
    server.offer = {
      source: 'sales',
      tables: [
        { name: 'orders', rows: 1200 },
        { name: 'regions', rows: 1 },
        { name: 'big_log', rows: null }
      ],
      more: 2,
      suggestions: ['Revenue by region per month, with a chart', 'Compare the regions side by side']
    };
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => find('.jp-AnalystEmpty-tables') !== null, 'the tables are shown');
    expect(find('.jp-AnalystEmpty-tables h3')?.textContent).toBe('Tables in sales');
    expect(
      [...mounted.host().querySelectorAll('.jp-AnalystEmpty-table')].map(li => li.textContent)
    ).toEqual(['orders1,200 rows', 'regions1 row', 'big_log']);
    expect(find('.jp-AnalystEmpty-more')?.textContent).toBe('and 2 more the model can look up');

    const box = byLabel<HTMLTextAreaElement>('Ask about your data')!;
    expect(box.value).toBe('');
    const [, second] = [...mounted.host().querySelectorAll('.jp-AnalystEmpty-suggestion')];
    await click(second);
    // Into the box to send or edit, not sent: nothing was asked of the model.
    expect(box.value).toBe('Compare the regions side by side');
    expect(document.activeElement).toBe(box);
    expect(server.calls.some(call => call.startsWith('POST turns'))).toBe(false);
  });

  it('shows no tables once the thread has a turn', async () => {
    const server = new FakeServer([THREAD]);
    server.offer = { ...server.offer, tables: [{ name: 'orders', rows: 3 }] };
    server.stored.set('thr_1', demoTurn());
    const client = server.client();
    await mount(client, <Conversation client={client} thread={THREAD} onBack={() => undefined} />);
    await until(() => find('.jp-AnalystTurn') !== null, 'the turn is shown');
    expect(find('.jp-AnalystEmpty')).toBeNull();
  });
});

describe('Sidebar', () => {
  const THREADS = [THREAD, threadOf('thr_2', 'Churn in the north', { source: 'crm' })];

  afterEach(() => window.localStorage.clear());

  it('goes from the list to a conversation and back, and the prompt command focuses where a question starts', async () => {
    const server = new FakeServer(THREADS);
    server.stored.set('thr_2', demoTurn());
    const client = server.client();
    const render = (focusRequest: number): Promise<void> =>
      mount(client, <Sidebar client={client} focusRequest={focusRequest} />);
    await render(0);
    await until(() => find('.jp-AnalystThreadList') !== null, 'the list is shown');
    expect(
      [...mounted.host().querySelectorAll('.jp-AnalystThreadList-title')].map(t => t.textContent)
    ).toEqual(['Revenue by region', 'Churn in the north']);
    expect(find('.jp-AnalystConversation')).toBeNull();

    // Asked for the prompt with no thread open: "New thread" takes the focus.
    await render(1);
    expect(document.activeElement).toBe(find('.jp-AnalystNewThread-source'));

    await click(find('[data-thread-id="thr_2"]')!);
    await until(() => find('.jp-AnalystTurn') !== null, "the thread's turn is shown");
    expect(find('.jp-AnalystConversation')?.getAttribute('data-thread-id')).toBe('thr_2');
    expect(find('.jp-AnalystConversation-title')?.textContent).toBe('Churn in the north');
    expect(find('.jp-AnalystThreadList')).toBeNull();
    expect(server.calls).toContain('events thr_2 0');
    // Opening a thread does not take the focus; asking for the prompt does.
    expect(document.activeElement).not.toBe(byLabel('Ask about your data'));
    await render(2);
    await until(
      () => document.activeElement === byLabel('Ask about your data'),
      'the prompt box has the focus'
    );

    await click(byLabel('Back to threads')!);
    await until(() => find('.jp-AnalystThreadList') !== null, 'the list is back');
    expect(find('.jp-AnalystConversation')).toBeNull();
    expect(server.calls.filter(call => call === 'threads').length).toBeGreaterThanOrEqual(2);
  });
  it('says the fix for a missing model once: in the banner, not again under the prompt', async () => {
    const hint = "set OPENAI_API_KEY in the server's environment, then restart the server";
    const server = new FakeServer(THREADS);
    server.model = { configured: false, name: null, base_url: null, scripted: false, hint };
    const client = server.client();
    await mount(client, <Sidebar client={client} />);
    await until(() => find('.jp-AnalystThreadList') !== null, 'the list is shown');
    await click(find('[data-thread-id="thr_1"]')!);
    await until(() => find('.jp-AnalystPrompt') !== null, 'the prompt box is shown');
    const text = mounted.host().textContent ?? '';
    expect(text.split(hint).length - 1).toBe(1);
    expect(find('.jp-AnalystBanner-noModel')?.textContent).toContain(hint);
    expect(find('.jp-AnalystPrompt-unavailable')?.textContent).toBe(
      'Ask is off until the server has a model (see above).'
    );
    expect((find('.jp-AnalystPrompt-send') as HTMLButtonElement).disabled).toBe(true);
  });
});
