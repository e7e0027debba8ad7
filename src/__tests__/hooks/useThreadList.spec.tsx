import * as React from 'react';
import { act } from 'react';
import { ServerConnection } from '@jupyterlab/services';

import {
  IThreadList,
  IThreadRequest,
  LIST_REFRESH_MS,
  useThreadList
} from '../../hooks/useThreadList';
import { AnalystClient, IThread } from '../../transport/api';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

function thread(id: string): IThread {
  return { thread_id: id, user: 'local', title: id, source: 'sales', created_at: '' } as IThread;
}

/** A client whose server answers with `threads()` as the thread list, read at each call. */
function clientListing(threads: () => IThread[]): AnalystClient {
  const client = new AnalystClient(
    ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
  );
  jest.spyOn(client, 'request').mockImplementation(async path => {
    const body =
      path === 'threads'
        ? { threads: threads() }
        : path === 'sources'
          ? { sources: [] }
          : { model: { configured: true }, sources: [] };
    return new Response(JSON.stringify(body), { status: 200 });
  });
  return client;
}

function Probe(props: {
  client: AnalystClient;
  opening: IThreadRequest | null;
  seen: (list: IThreadList) => void;
}): null {
  props.seen(useThreadList(props.client, props.opening));
  return null;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await act(async () => {
      await Promise.resolve();
    });
  }
}

describe('opening a thread from outside the panel', () => {
  it('reads the list again and opens the thread, made after the list was first read', async () => {
    let listed = [thread('thr_a')];
    const client = clientListing(() => listed);
    let latest: IThreadList | null = null;
    const render = (opening: IThreadRequest | null): void =>
      act(() =>
        mounted.root().render(<Probe client={client} opening={opening} seen={l => (latest = l)} />)
      );

    render(null);
    await settle();
    expect(latest!.threads.map(t => t.thread_id)).toEqual(['thr_a']);
    expect(latest!.selected).toBeNull();

    // A chat's persona made a thread since: the command opens it.
    listed = [thread('thr_chat'), thread('thr_a')];
    render({ threadId: 'thr_chat', serial: 1 });
    await settle();
    expect(latest!.threads.map(t => t.thread_id)).toEqual(['thr_chat', 'thr_a']);
    expect(latest!.selected).toBe('thr_chat');

    // Back home, then asked again for the same thread: opened again.
    act(() => latest!.select(null));
    render({ threadId: 'thr_chat', serial: 2 });
    await settle();
    expect(latest!.selected).toBe('thr_chat');
  });
});

describe('the list of threads while it is shown', () => {
  afterEach(() => jest.useRealTimers());

  it('shows a thread made elsewhere without a reload, and is not read while a thread is open', async () => {
    jest.useFakeTimers();
    let listed = [thread('thr_a')];
    let reads = 0;
    const client = clientListing(() => {
      reads += 1;
      return listed;
    });
    let latest: IThreadList | null = null;
    act(() =>
      mounted.root().render(<Probe client={client} opening={null} seen={l => (latest = l)} />)
    );
    await settle();
    expect(latest!.threads.map(t => t.thread_id)).toEqual(['thr_a']);

    // A chat's persona makes a thread: the shown list has it within one interval.
    listed = [thread('thr_chat'), thread('thr_a')];
    await act(async () => {
      jest.advanceTimersByTime(LIST_REFRESH_MS);
    });
    await settle();
    expect(latest!.threads.map(t => t.thread_id)).toEqual(['thr_chat', 'thr_a']);

    // A thread open: the list is not read again meanwhile.
    act(() => latest!.select('thr_a'));
    await settle();
    const before = reads;
    await act(async () => {
      jest.advanceTimersByTime(3 * LIST_REFRESH_MS);
    });
    await settle();
    expect(reads).toBe(before);

    // Back to the list: read again at once.
    listed = [thread('thr_new'), ...listed];
    act(() => latest!.select(null));
    await settle();
    expect(latest!.threads.map(t => t.thread_id)).toEqual(['thr_new', 'thr_chat', 'thr_a']);
  });
});
