import * as React from 'react';

import { useAnalyst } from '../context';
import { IThreadRequest, useThreadList } from '../hooks/useThreadList';
import { useShortcut } from '../hooks/useShortcut';
import type { AnalystClient } from '../transport/api';
import { Conversation } from './Conversation';
import { ErrorBanner } from './ErrorBanner';
import { ModelStrip } from './ModelStrip';
import { NewThreadForm } from './NewThreadForm';
import { ThreadList } from './ThreadList';

export interface ISidebarProps {
  client: AnalystClient;
  submitOnEnter?: boolean;
  /** How often the shown thread list is read again (ms; the settings' `threadListRefresh`). */
  listRefreshMs?: number;
  /** Where the panel is: it offers to move to the other place. */
  area?: 'sidebar' | 'main';
  /** A thread to open, asked for from outside the panel. */
  opening?: IThreadRequest | null;
  /**
   * Changes each time the prompt box is asked for (PROMPT_COMMAND): it takes the focus, or,
   * with no thread open, the "New thread" form does.
   */
  focusRequest?: number;
}

/** The commands that open the panel in the main area and bring it back (index.ts). */
export const AREA_COMMANDS = {
  main: 'jupyter-analyst:open-main',
  sidebar: 'jupyter-analyst:back-to-sidebar'
} as const;

/**
 * The command that opens the panel and puts the cursor in its prompt box (index.ts; its key,
 * schema/plugin.json, is said by the box's hover text).
 */
export const PROMPT_COMMAND = 'jupyter-analyst:focus-prompt';

/**
 * The "Data analyst" panel: the thread list with "New thread", or the selected
 * thread's conversation.
 */
export function Sidebar({
  client,
  submitOnEnter,
  listRefreshMs,
  area = 'sidebar',
  opening,
  focusRequest = 0
}: ISidebarProps): JSX.Element {
  const { commands } = useAnalyst();
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
  } = useThreadList(client, opening ?? null, listRefreshMs);

  const thread = threads.find(t => t.thread_id === selected);
  const home = React.useRef<HTMLDivElement>(null);
  const shortcut = useShortcut(commands, PROMPT_COMMAND);
  // No thread open: the first field of "New thread" is where a question starts.
  const handledRequest = React.useRef(focusRequest);
  React.useEffect(() => {
    if (focusRequest === handledRequest.current) {
      return;
    }
    handledRequest.current = focusRequest;
    if (!thread) {
      home.current?.querySelector<HTMLElement>('select:enabled, input, button')?.focus();
    }
  }, [focusRequest, thread]);
  // Said where the question is typed too, but once: the fix is the banner's, above.
  const unavailable =
    config && !config.model.configured
      ? 'Ask is off until the server has a model (see above).'
      : null;
  return (
    <div className="jp-AnalystSidebar">
      <div className="jp-AnalystSidebar-bar">
        <ModelStrip config={config} />
        {commands && (
          <button
            type="button"
            className="jp-Button jp-mod-minimal jp-AnalystSidebar-area"
            data-area={area}
            aria-label={area === 'sidebar' ? 'Open in the main area' : 'Back to the sidebar'}
            title={
              area === 'sidebar'
                ? 'Open in the main area (it opens there again after a reload)'
                : 'Back to the sidebar (it opens there again after a reload)'
            }
            onClick={() =>
              void commands.execute(area === 'sidebar' ? AREA_COMMANDS.main : AREA_COMMANDS.sidebar)
            }
          >
            <span aria-hidden="true">{area === 'sidebar' ? '⤢ Main area' : '⤡ Sidebar'}</span>
          </button>
        )}
      </div>
      {error && <ErrorBanner error={error} onDismiss={clearError} />}
      {thread ? (
        <Conversation
          key={thread.thread_id}
          client={client}
          thread={thread}
          submitOnEnter={submitOnEnter}
          unavailable={unavailable}
          shortcut={shortcut}
          focusRequest={focusRequest}
          contextFolder={config?.context?.configured ?? false}
          onBack={() => {
            select(null);
            void refresh();
          }}
        />
      ) : (
        <div className="jp-AnalystHome" ref={home}>
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
