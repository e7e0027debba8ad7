import * as React from 'react';

import { IThreadRequest, useThreadList } from '../hooks/useThreadList';
import type { AnalystClient } from '../transport/api';
import { Conversation } from './Conversation';
import { ErrorBanner } from './ErrorBanner';
import { ModelStrip } from './ModelStrip';
import { NewThreadForm } from './NewThreadForm';
import { ThreadList } from './ThreadList';

export interface ISidebarProps {
  client: AnalystClient;
  submitOnEnter?: boolean;
  /** A thread to open, asked for from outside the panel. */
  opening?: IThreadRequest | null;
}

/**
 * The "Data analyst" panel: the thread list with "New thread", or the selected
 * thread's conversation.
 */
export function Sidebar({ client, submitOnEnter, opening }: ISidebarProps): JSX.Element {
  const {
    config,
    sources,
    threads,
    loaded,
    selected,
    creating,
    error,
    select,
    refresh,
    create,
    clearError
  } = useThreadList(client, opening ?? null);

  const thread = threads.find(t => t.thread_id === selected);
  return (
    <div className="jp-AnalystSidebar">
      <ModelStrip config={config} />
      {error && <ErrorBanner error={error} onDismiss={clearError} />}
      {thread ? (
        <Conversation
          key={thread.thread_id}
          client={client}
          thread={thread}
          submitOnEnter={submitOnEnter}
          onBack={() => {
            select(null);
            void refresh();
          }}
        />
      ) : (
        <div className="jp-AnalystHome">
          <h2 className="jp-AnalystHome-heading">Data analyst</h2>
          <NewThreadForm
            sources={sources}
            busy={creating}
            onCreate={options => void create(options)}
          />
          {loaded && <ThreadList threads={threads} selected={selected} onSelect={select} />}
        </div>
      )}
    </div>
  );
}
