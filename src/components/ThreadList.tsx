import * as React from 'react';

import { deleteIcon, editIcon } from '@jupyterlab/ui-components';

import type { IThread } from '../transport/api';

export interface IThreadListProps {
  threads: IThread[];
  selected: string | null;
  onSelect: (threadId: string) => void;
  /** Give a thread the user's own title; resolves to whether the server took it. */
  onRename?: (threadId: string, title: string) => Promise<boolean>;
  /** Delete a thread; resolves to whether the server did. */
  onDelete?: (threadId: string) => Promise<boolean>;
}

/** When something last happened on a thread, as the reader's locale writes it. */
export function lastActivity(thread: IThread): string {
  const when = thread.last_activity ?? thread.created_at;
  const date = new Date(when);
  return Number.isNaN(date.getTime()) ? when : date.toLocaleString();
}

/** The name a thread is shown by: its title (its first question until renamed). */
export function threadName(thread: IThread): string {
  return thread.title?.trim() || 'New thread';
}

/** The threads whose title or source contain every word of `query` (any case). */
export function matching(threads: IThread[], query: string): IThread[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) {
    return threads;
  }
  return threads.filter(thread => {
    const text = `${thread.title ?? ''} ${thread.source ?? ''}`.toLowerCase();
    return words.every(word => text.includes(word));
  });
}

/** The list is searchable once it is longer than a glance. */
export const SEARCH_FROM = 4;

/** The user's threads, newest first: title, source, last activity, and whether a turn runs. */
export function ThreadList({
  threads,
  selected,
  onSelect,
  onRename,
  onDelete
}: IThreadListProps): JSX.Element {
  const [query, setQuery] = React.useState('');
  if (!threads.length) {
    return (
      <p className="jp-AnalystThreadList-empty">No threads yet: start one on a data source.</p>
    );
  }
  const shown = matching(threads, query);
  return (
    <div className="jp-AnalystThreadList-box">
      {threads.length >= SEARCH_FROM && (
        <input
          type="search"
          className="jp-AnalystThreadList-search jp-mod-styled"
          placeholder="Search threads"
          aria-label="Search threads by title or source"
          value={query}
          onChange={event => setQuery(event.target.value)}
        />
      )}
      {shown.length ? (
        <ul className="jp-AnalystThreadList" aria-label="Threads">
          {shown.map(thread => (
            <ThreadRow
              key={thread.thread_id}
              thread={thread}
              current={thread.thread_id === selected}
              onSelect={onSelect}
              onRename={onRename}
              onDelete={onDelete}
            />
          ))}
        </ul>
      ) : (
        <p className="jp-AnalystThreadList-empty">No thread matches “{query.trim()}”.</p>
      )}
    </div>
  );
}

interface IThreadRowProps {
  thread: IThread;
  current: boolean;
  onSelect: (threadId: string) => void;
  onRename?: (threadId: string, title: string) => Promise<boolean>;
  onDelete?: (threadId: string) => Promise<boolean>;
}

type RowMode = 'shown' | 'renaming' | 'saving' | 'confirming' | 'deleting';

/** One thread: opens on click; renamed in place; deleted after a confirmation in the row. */
function ThreadRow({
  thread,
  current,
  onSelect,
  onRename,
  onDelete
}: IThreadRowProps): JSX.Element {
  const [mode, setMode] = React.useState<RowMode>('shown');
  const [title, setTitle] = React.useState(threadName(thread));
  const name = threadName(thread);
  const running = thread.running === true;

  const saveTitle = async (): Promise<void> => {
    const wanted = title.trim();
    if (!onRename || !wanted || wanted === name) {
      setMode('shown');
      return;
    }
    setMode('saving');
    const done = await onRename(thread.thread_id, wanted);
    setMode(done ? 'shown' : 'renaming');
  };

  const confirmDelete = async (): Promise<void> => {
    if (!onDelete) {
      return;
    }
    setMode('deleting');
    if (!(await onDelete(thread.thread_id))) {
      setMode('shown');
    }
  };

  if (mode === 'renaming' || mode === 'saving') {
    return (
      <li className="jp-AnalystThreadList-row">
        <form
          className="jp-AnalystThreadList-rename"
          onSubmit={event => {
            event.preventDefault();
            void saveTitle();
          }}
        >
          <input
            className="jp-mod-styled"
            aria-label={`New title for “${name}”`}
            value={title}
            maxLength={1000}
            disabled={mode === 'saving'}
            autoFocus
            onChange={event => setTitle(event.target.value)}
            onKeyDown={event => {
              if (event.key === 'Escape') {
                setTitle(name);
                setMode('shown');
              }
            }}
          />
          <button
            type="submit"
            className="jp-Button jp-mod-styled jp-mod-accept"
            disabled={mode === 'saving'}
          >
            Save
          </button>
        </form>
      </li>
    );
  }

  return (
    <li className="jp-AnalystThreadList-row" data-running={running ? 'true' : undefined}>
      <button
        type="button"
        className="jp-AnalystThreadList-item"
        aria-current={current ? 'true' : undefined}
        data-thread-id={thread.thread_id}
        onClick={() => onSelect(thread.thread_id)}
      >
        <span className="jp-AnalystThreadList-title">{name}</span>
        <span className="jp-AnalystThreadList-meta">
          <span className="jp-AnalystThreadList-source">{thread.source ?? 'no source'}</span>
          {running ? (
            <span className="jp-AnalystThreadList-running">answering…</span>
          ) : (
            <span className="jp-AnalystThreadList-when">{lastActivity(thread)}</span>
          )}
        </span>
      </button>
      {mode === 'confirming' || mode === 'deleting' ? (
        <div className="jp-AnalystThreadList-confirm" role="group" aria-label={`Delete “${name}”?`}>
          <span>Delete this thread, its artifacts and its notebook?</span>
          <button
            type="button"
            className="jp-Button jp-mod-styled jp-mod-warn"
            disabled={mode === 'deleting'}
            onClick={() => void confirmDelete()}
          >
            Delete
          </button>
          <button
            type="button"
            className="jp-Button jp-mod-styled jp-mod-reject"
            disabled={mode === 'deleting'}
            onClick={() => setMode('shown')}
          >
            Cancel
          </button>
        </div>
      ) : (
        <span className="jp-AnalystThreadList-actions">
          {onRename && (
            <button
              type="button"
              className="jp-Button jp-mod-minimal jp-AnalystThreadList-renameButton"
              aria-label={`Rename “${name}”`}
              title="Rename"
              onClick={() => {
                setTitle(name);
                setMode('renaming');
              }}
            >
              <editIcon.react tag="span" elementSize="normal" />
            </button>
          )}
          {onDelete && (
            <button
              type="button"
              className="jp-Button jp-mod-minimal jp-AnalystThreadList-deleteButton"
              aria-label={`Delete “${name}”`}
              title={running ? 'A turn is running: stop it first' : 'Delete'}
              disabled={running}
              onClick={() => setMode('confirming')}
            >
              <deleteIcon.react tag="span" elementSize="normal" />
            </button>
          )}
        </span>
      )}
    </li>
  );
}
