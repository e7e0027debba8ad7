import * as React from 'react';

import { AnalystApiError, AnalystClient, IServerConfig, ISource, IThread } from '../transport/api';
import { Conversation } from './Conversation';
import { ErrorBanner } from './ErrorBanner';
import { ModelStrip } from './ModelStrip';
import { NewThreadForm } from './NewThreadForm';
import { ThreadList } from './ThreadList';

export interface ISidebarProps {
  client: AnalystClient;
  submitOnEnter?: boolean;
}

function asApiError(reason: unknown): AnalystApiError {
  return reason instanceof AnalystApiError
    ? reason
    : new AnalystApiError(0, { message: String(reason), reason: null, hint: null });
}

/**
 * The "Data analyst" panel: the thread list with "New thread", or the selected
 * thread's conversation.
 */
export function Sidebar({ client, submitOnEnter }: ISidebarProps): JSX.Element {
  const [sources, setSources] = React.useState<ISource[]>([]);
  const [threads, setThreads] = React.useState<IThread[]>([]);
  const [selected, setSelected] = React.useState<string | null>(null);
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
    } catch (reason) {
      setError(asApiError(reason));
    } finally {
      setLoaded(true);
    }
  }, [client]);

  React.useEffect(() => {
    void refresh();
  }, [refresh]);

  const create = async (options: { source?: string; title?: string }): Promise<void> => {
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

  const thread = threads.find(t => t.thread_id === selected);
  return (
    <div className="jp-AnalystSidebar">
      <ModelStrip config={config} />
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {thread ? (
        <Conversation
          key={thread.thread_id}
          client={client}
          thread={thread}
          submitOnEnter={submitOnEnter}
          onBack={() => {
            setSelected(null);
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
            <ThreadList threads={threads} selected={selected} onSelect={setSelected} />
          )}
        </div>
      )}
    </div>
  );
}
