import * as React from 'react';

import { AnalystClient, IThread } from '../api';
import { useThreadEvents } from '../threadEvents';
import { ArtifactsPanel, ThreadViewName, ThreadViewTabs } from './artifacts';
import { ErrorBanner } from './ErrorBanner';
import { EventList } from './EventList';
import { PromptBox } from './PromptBox';
import { ThreadActions } from './ThreadActions';

export interface IConversationProps {
  client: AnalystClient;
  thread: IThread;
  submitOnEnter?: boolean;
  onBack: () => void;
}

/** One thread: its header, its events as they arrive, and the prompt box. */
export function Conversation({
  client,
  thread,
  submitOnEnter,
  onBack
}: IConversationProps): JSX.Element {
  const { events, running, error, submit, clearError } = useThreadEvents(
    client,
    thread.thread_id
  );

  const ask = (prompt: string): void => {
    void submit({ prompt });
  };

  // "Conversation | Artifacts": the artifacts view hides the body (style/notebook.css).
  const [tab, setTab] = React.useState<ThreadViewName>('conversation');

  return (
    <section
      className="jp-AnalystConversation"
      data-thread-id={thread.thread_id}
      data-view={tab}
      aria-busy={running}
    >
      <header className="jp-AnalystConversation-header">
        <button
          type="button"
          className="jp-AnalystConversation-back jp-Button jp-mod-minimal"
          aria-label="Back to threads"
          onClick={onBack}
        >
          ‹
        </button>
        <span className="jp-AnalystConversation-title">
          {thread.title || 'Untitled thread'}
        </span>
        <span className="jp-AnalystConversation-source">{thread.source}</span>
        <ThreadActions threadId={thread.thread_id} running={running} />
      </header>
      <ThreadViewTabs view={tab} onChange={setTab} />
      {tab === 'artifacts' && <ArtifactsPanel threadId={thread.thread_id} running={running} />}
      {error && <ErrorBanner error={error} onDismiss={clearError} />}
      <div className="jp-AnalystConversation-body">
        <EventList events={events} />
      </div>
      {running && (
        <div className="jp-AnalystConversation-status" role="status">
          Working…
        </div>
      )}
      <PromptBox busy={running} onSubmit={ask} submitOnEnter={submitOnEnter} />
    </section>
  );
}
