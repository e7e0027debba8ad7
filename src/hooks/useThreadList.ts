/**
 * The panel's home: the server's model and sources, the user's threads, and which one is
 * open; "New thread" creates one and opens it. A failure of any of these calls is kept
 * for the banner until dismissed.
 */

import * as React from 'react';

import { AnalystApiError, AnalystClient, IServerConfig, ISource, IThread } from '../transport/api';

function asApiError(reason: unknown): AnalystApiError {
  return reason instanceof AnalystApiError
    ? reason
    : new AnalystApiError(0, { message: String(reason), reason: null, hint: null });
}

/**
 * A thread asked for from outside the panel (the command `jupyter-analyst:open` with
 * `{thread}`, as a chat's Analyst persona links it): a new request each time, even for the
 * same thread, so asking again opens it again.
 */
export interface IThreadRequest {
  threadId: string;
  serial: number;
}

/** What a new thread is made with. */
export interface INewThreadOptions {
  source?: string;
  title?: string;
}

/** The threads as the home shows them, and what can be done there. */
export interface IThreadList {
  /** The server's model (null until it answers). */
  config: IServerConfig | null;
  sources: ISource[];
  threads: IThread[];
  /** The list has been read once (an empty list is then "no threads yet"). */
  loaded: boolean;
  /** The open thread's id (null: the home is shown). */
  selected: string | null;
  /** A thread is being created. */
  creating: boolean;
  /** The last failure, until dismissed or the next creation. */
  error: AnalystApiError | null;
  /** Open a thread (null: back to the home). */
  select: (threadId: string | null) => void;
  /** Read the sources and threads again. */
  refresh: () => Promise<void>;
  /** Create a thread and open it. */
  create: (options: INewThreadOptions) => Promise<void>;
  /** Give a thread the user's own title; whether the server took it. */
  rename: (threadId: string, title: string) => Promise<boolean>;
  /** Delete a thread and what it made; whether the server did. */
  remove: (threadId: string) => Promise<boolean>;
  clearError: () => void;
}

/**
 * Where the open thread is remembered, so a reload returns to it: one key per server
 * (two JupyterLabs in one browser keep their own).
 */
export function openThreadKey(client: AnalystClient): string {
  return `jupyter-analyst:open-thread:${client.settings.baseUrl}`;
}

function remembered(key: string): string | null {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null; // storage refused (a private window's policy): nothing to restore
  }
}

function remember(key: string, threadId: string | null): void {
  try {
    if (threadId === null) {
      window.localStorage.removeItem(key);
    } else {
      window.localStorage.setItem(key, threadId);
    }
  } catch {
    // Storage refused: the panel still works, a reload shows the list.
  }
}

/** How often the shown list of threads is read again (ms), unless the settings say otherwise
 * (`threadListRefresh`, schema/plugin.json). */
export const LIST_REFRESH_MS = 15_000;

export function useThreadList(
  client: AnalystClient,
  opening: IThreadRequest | null = null,
  refreshMs: number = LIST_REFRESH_MS
): IThreadList {
  const [sources, setSources] = React.useState<ISource[]>([]);
  const [threads, setThreads] = React.useState<IThread[]>([]);
  const key = openThreadKey(client);
  const [selected, setSelectedState] = React.useState<string | null>(null);
  const setSelected = React.useCallback(
    (threadId: string | null): void => {
      remember(key, threadId);
      setSelectedState(threadId);
    },
    [key]
  );
  const [error, setError] = React.useState<AnalystApiError | null>(null);
  const [creating, setCreating] = React.useState(false);
  const [loaded, setLoaded] = React.useState(false);
  const [config, setConfig] = React.useState<IServerConfig | null>(null);

  React.useEffect(() => {
    client.config().then(setConfig, (reason: unknown) => setError(asApiError(reason)));
  }, [client]);

  const refresh = React.useCallback(async (): Promise<void> => {
    try {
      const [found, listed] = await Promise.all([client.sources(), client.threads()]);
      setSources(found);
      setThreads(listed);
      // A reload returns to the thread that was open, if it is still there.
      const open = remembered(key);
      setSelectedState(
        current => current ?? (open && listed.some(t => t.thread_id === open) ? open : null)
      );
    } catch (reason) {
      setError(asApiError(reason));
    } finally {
      setLoaded(true);
    }
  }, [client, key]);

  // While the list is shown, it is read again now and then (and on coming back to it, and
  // when the page comes back into view): a thread made elsewhere (a chat's Analyst persona,
  // an MCP client, another tab) appears without a reload. Not while the page is hidden.
  React.useEffect(() => {
    if (selected !== null) {
      return;
    }
    void refresh();
    const again = (): void => {
      if (document.visibilityState !== 'hidden') {
        void refresh();
      }
    };
    const timer = window.setInterval(again, Math.max(1_000, refreshMs));
    document.addEventListener('visibilitychange', again);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', again);
    };
  }, [selected, refresh, refreshMs]);

  React.useEffect(() => {
    if (opening) {
      // Read the list again first: a thread made elsewhere since (in a chat, say) is then in it.
      void refresh().then(() => setSelected(opening.threadId));
    }
  }, [opening, refresh, setSelected]);

  const create = async (options: INewThreadOptions): Promise<void> => {
    setCreating(true);
    setError(null);
    try {
      const thread = await client.createThread(options);
      setThreads(current => [thread, ...current]);
      setSelected(thread.thread_id);
    } catch (reason) {
      setError(asApiError(reason));
    } finally {
      setCreating(false);
    }
  };

  const rename = async (threadId: string, title: string): Promise<boolean> => {
    setError(null);
    try {
      const renamed = await client.renameThread(threadId, title);
      setThreads(current =>
        current.map(t => (t.thread_id === threadId ? { ...t, title: renamed.title } : t))
      );
      return true;
    } catch (reason) {
      setError(asApiError(reason));
      return false;
    }
  };

  const remove = async (threadId: string): Promise<boolean> => {
    setError(null);
    try {
      await client.deleteThread(threadId);
      setThreads(current => current.filter(t => t.thread_id !== threadId));
      if (selected === threadId) {
        setSelected(null);
      }
      return true;
    } catch (reason) {
      setError(asApiError(reason));
      return false;
    }
  };

  return {
    config,
    sources,
    threads,
    loaded,
    selected,
    creating,
    error,
    select: setSelected,
    refresh,
    create,
    rename,
    remove,
    clearError: () => setError(null)
  };
}
