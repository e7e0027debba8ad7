import * as React from 'react';

import type { IThread } from '../transport/api';

export interface IThreadListProps {
  threads: IThread[];
  selected: string | null;
  onSelect: (threadId: string) => void;
}

/** When something last happened on a thread, as the reader's locale writes it. */
export function lastActivity(thread: IThread): string {
  const when = thread.last_activity ?? thread.created_at;
  const date = new Date(when);
  return Number.isNaN(date.getTime()) ? when : date.toLocaleString();
}

/** The user's threads, newest first: title, source and last activity. */
export function ThreadList({ threads, selected, onSelect }: IThreadListProps): JSX.Element {
  if (!threads.length) {
    return (
      <p className="jp-AnalystThreadList-empty">No threads yet: start one on a data source.</p>
    );
  }
  return (
    <ul className="jp-AnalystThreadList" aria-label="Threads">
      {threads.map(thread => (
        <li key={thread.thread_id}>
          <button
            type="button"
            className="jp-AnalystThreadList-item"
            aria-current={thread.thread_id === selected ? 'true' : undefined}
            data-thread-id={thread.thread_id}
            onClick={() => onSelect(thread.thread_id)}
          >
            <span className="jp-AnalystThreadList-title">{thread.title || 'Untitled thread'}</span>
            <span className="jp-AnalystThreadList-meta">
              <span className="jp-AnalystThreadList-source">{thread.source ?? 'no source'}</span>
              <span className="jp-AnalystThreadList-when">{lastActivity(thread)}</span>
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}
