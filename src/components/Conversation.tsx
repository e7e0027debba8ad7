import * as React from 'react';

import type { AnalystClient, IThread } from '../transport/api';
import { proposalCalls } from '../model';
import { useAnalyst } from '../context';
import { useAttachedNotebook } from '../hooks/useAttachedNotebook';
import { useThread } from '../hooks/useThread';
import { useBudget } from '../hooks/useBudget';
import { ArtifactsPanel, ThreadViewName, ThreadViewTabs } from './artifacts';
import { BudgetStatus } from './BudgetStatus';
import { EmptyThread } from './EmptyThread';
import { ErrorBanner } from './ErrorBanner';
import { NotebookChip } from './NotebookChip';
import { PendingProposals } from './PendingProposals';
import { PromptBox } from './PromptBox';
import { StopButton } from './StopButton';
import { ThreadActions } from './ThreadActions';
import { threadName } from './ThreadList';
import { TurnList } from './TurnList';
import { TurnStatus } from './TurnStatus';
import { ContextFolderOffered } from './VerifyAnswer';
import { useFollowBottom } from '../hooks/useFollowBottom';
import type { IShortcut } from '../hooks/useShortcut';

export interface IConversationProps {
  client: AnalystClient;
  thread: IThread;
  submitOnEnter?: boolean;
  /** Why nothing can be asked (no model configured), or null. */
  unavailable?: string | null;
  /** The key that brings the focus to the prompt box, said by its hover text. */
  shortcut?: IShortcut | null;
  /** Changes each time the prompt box is asked for from outside (a command): it takes the focus. */
  focusRequest?: number;
  /** The server has a context folder: completed answers offer "Verify this answer". */
  contextFolder?: boolean;
  onBack: () => void;
}

/** The first line of a question that says something (the server titles a thread so). */
function firstLine(text: string | undefined): string {
  return (
    (text ?? '')
      .split('\n')
      .find(line => line.trim())
      ?.trim() ?? ''
  );
}

/** One thread: its header, its turns as they happen, Stop, and the prompt box. */
export function Conversation({
  client,
  thread,
  submitOnEnter,
  unavailable = null,
  shortcut = null,
  focusRequest = 0,
  contextFolder = false,
  onBack
}: IConversationProps): JSX.Element {
  const { notebooks } = useAnalyst();
  // The notebook the question carries when a turn starts (the chip's): the model sees its
  // outline and may read its cells; none when the user detached it or none is open.
  const notebook = useAttachedNotebook(notebooks);
  const { view, running, stopping, connection, error, submit, stop, clearError } = useThread(
    client,
    thread.thread_id,
    notebook.pathNow
  );
  const body = useFollowBottom<HTMLDivElement>(view);
  // What changes what was spent: each turn's end, and each update of the thread's summary.
  const spent = view.turns.reduce((n, t) => n + t.memory.length + (t.end ? 1 : 0), 0);
  const budget = useBudget(client, thread.thread_id, running, spent);

  // The prompt takes the focus back when a turn ends, unless the person has gone on to work
  // elsewhere meanwhile (reviewing a proposal in the notebook, typing in a cell): the focus
  // is taken only from the conversation itself or from nowhere.
  const [focusToken, setFocusToken] = React.useState(0);
  const root = React.useRef<HTMLElement>(null);
  const wasRunning = React.useRef(running);
  React.useEffect(() => {
    if (wasRunning.current && !running) {
      const active = root.current?.ownerDocument.activeElement ?? null;
      if (
        active === null ||
        active === active.ownerDocument.body ||
        root.current?.contains(active)
      ) {
        setFocusToken(t => t + 1);
      }
    }
    wasRunning.current = running;
  }, [running]);
  // And when it is asked for (a request made before this thread was opened is not this one's).
  const handledRequest = React.useRef(focusRequest);
  React.useEffect(() => {
    if (focusRequest !== handledRequest.current) {
      handledRequest.current = focusRequest;
      setFocusToken(t => t + 1);
    }
  }, [focusRequest]);

  const ask = (prompt: string): Promise<boolean> => submit(prompt);
  // A suggested question of an empty thread, put into the prompt box.
  const [fill, setFill] = React.useState<{ text: string; token: number } | null>(null);
  const pick = (text: string): void => setFill(f => ({ text, token: (f?.token ?? 0) + 1 }));

  // "Conversation | Artifacts": the artifacts view hides the body (style/notebook.css).
  const [tab, setTab] = React.useState<ThreadViewName>('conversation');

  return (
    <section
      ref={root}
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
          {thread.title?.trim() || firstLine(view.turns[0]?.prompt) || threadName(thread)}
        </span>
        <span className="jp-AnalystConversation-source">{thread.source}</span>
        <ThreadActions threadId={thread.thread_id} running={running} />
      </header>
      <ThreadViewTabs view={tab} onChange={setTab} />
      {tab === 'artifacts' && (
        <ArtifactsPanel threadId={thread.thread_id} running={running} turns={view.turns} />
      )}
      {error && <ErrorBanner error={error} onDismiss={clearError} />}
      <div className="jp-AnalystConversation-body" ref={body}>
        {/* One stable child: the scroll follows its size as outputs render. */}
        <div className="jp-AnalystConversation-content">
          {view.turns.length === 0 && !running ? (
            <EmptyThread client={client} threadId={thread.thread_id} onPick={pick} />
          ) : (
            <ContextFolderOffered.Provider value={contextFolder}>
              <TurnList view={view} threadId={thread.thread_id} />
            </ContextFolderOffered.Provider>
          )}
        </div>
      </div>
      {running && <TurnStatus view={view} connection={connection} stopping={stopping} />}
      <BudgetStatus reply={budget} />
      <PendingProposals threadId={thread.thread_id} calls={proposalCalls(view)} />
      <NotebookChip
        open={notebook.open}
        choice={notebook.choice}
        attached={notebook.attached}
        onChoose={notebook.choose}
        onFollow={notebook.follow}
        onDetach={notebook.detach}
      />
      <PromptBox
        busy={running}
        onSubmit={ask}
        submitOnEnter={submitOnEnter}
        focusToken={focusToken}
        unavailable={unavailable}
        shortcut={shortcut}
        fill={fill}
      >
        {running && <StopButton stopping={stopping} onStop={() => void stop()} />}
      </PromptBox>
    </section>
  );
}
