import * as React from 'react';

import { useThreadList } from '../hooks/useThreadList';
import type { AnalystClient } from '../transport/api';
import { Conversation } from './Conversation';
import { ErrorBanner } from './ErrorBanner';
import { ModelStrip } from './ModelStrip';
import { NewThreadForm } from './NewThreadForm';
import { ThreadList } from './ThreadList';

export interface ISidebarProps {
  client: AnalystClient;
  submitOnEnter?: boolean;
}

/**
 * The "Data analyst" panel: the thread list with "New thread", or the selected
 * thread's conversation.
 */
export function Sidebar({ client, submitOnEnter }: ISidebarProps): JSX.Element {
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
    rename,
    remove,
    clearError
  } = useThreadList(client);

  const thread = threads.find(t => t.thread_id === selected);
  // Said where the question is typed, not only in the banner above.
  const unavailable =
    config && !config.model.configured
      ? `Nothing can be answered: no model is configured for this server${
          config.model.hint ? ` (${config.model.hint})` : ''
        }.`
      : null;
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
          unavailable={unavailable}
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
          {loaded && (
            <ThreadList
              threads={threads}
              selected={selected}
              onSelect={select}
              onRename={rename}
              onDelete={remove}
            />
          )}
        </div>
      )}
    </div>
  );
}
