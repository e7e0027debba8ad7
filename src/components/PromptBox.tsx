import * as React from 'react';

import type { IShortcut } from '../hooks/useShortcut';

export interface IPromptBoxProps {
  /** A turn runs: the box keeps its text but does not submit. */
  busy: boolean;
  /**
   * Send the question. When it returns a promise, the box keeps the text until it resolves
   * true (the server took the turn): a refusal or a lost network leaves it to send again.
   */
  onSubmit: (prompt: string) => void | Promise<boolean>;
  /** Why nothing can be asked now (no model configured): Ask is off and this is said. */
  unavailable?: string | null;
  /** Enter submits (Shift+Enter adds a line); off: Ctrl/Cmd+Enter submits. */
  submitOnEnter?: boolean;
  /** Changes when the box should take the focus (a turn ended). */
  focusToken?: number;
  /** The key that brings the focus here from anywhere in JupyterLab (its hover text says it). */
  shortcut?: IShortcut | null;
  /** Text put into the box from outside (a suggested question): set each time it changes. */
  fill?: { text: string; token: number } | null;
  /** Shown beside the send button (Stop, while a turn runs). */
  children?: React.ReactNode;
}

/** Where the user asks: Enter submits, Shift+Enter starts a new line. */
export function PromptBox({
  busy,
  onSubmit,
  submitOnEnter = true,
  focusToken = 0,
  unavailable = null,
  shortcut = null,
  fill = null,
  children
}: IPromptBoxProps): JSX.Element {
  const [prompt, setPrompt] = React.useState('');
  const [sending, setSending] = React.useState(false);
  const input = React.useRef<HTMLTextAreaElement>(null);
  // The text as it is now, for a send that resolves after the user typed on.
  const current = React.useRef(prompt);
  current.current = prompt;
  const canSubmit = !busy && !sending && !unavailable && prompt.trim().length > 0;

  React.useEffect(() => {
    if (focusToken > 0) {
      input.current?.focus();
    }
  }, [focusToken]);

  // A suggestion picked: the box takes its text, to send as it is or edit first.
  React.useEffect(() => {
    if (fill !== null) {
      setPrompt(fill.text);
      input.current?.focus();
    }
  }, [fill]);

  const submit = (): void => {
    if (!canSubmit) {
      return;
    }
    const sent = prompt;
    const outcome = onSubmit(sent);
    if (!(outcome instanceof Promise)) {
      setPrompt('');
      return;
    }
    setSending(true);
    void outcome.then(
      accepted => {
        setSending(false);
        // Cleared only once the server has the question, and only if it is still the text.
        if (accepted && current.current === sent) {
          setPrompt('');
        }
      },
      () => setSending(false)
    );
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>): void => {
    // Enter while an input method composes a word belongs to the input method.
    if (event.key !== 'Enter' || event.nativeEvent.isComposing) {
      return;
    }
    const wantsSubmit = submitOnEnter ? !event.shiftKey : event.ctrlKey || event.metaKey;
    if (wantsSubmit) {
      event.preventDefault();
      submit();
    }
  };

  return (
    <form
      className="jp-AnalystPrompt"
      onSubmit={e => {
        e.preventDefault();
        submit();
      }}
    >
      <textarea
        ref={input}
        className="jp-AnalystPrompt-input"
        aria-label="Ask about your data"
        // Short enough for the default sidebar width; the rest is in the hover text.
        placeholder={
          submitOnEnter
            ? 'Ask about your data (Enter sends)'
            : 'Ask about your data (Ctrl+Enter sends)'
        }
        title={[
          submitOnEnter
            ? 'Ask about your data: Enter sends, Shift+Enter starts a new line.'
            : 'Ask about your data: Ctrl+Enter sends.',
          shortcut ? `${shortcut.label} brings you here from anywhere in JupyterLab.` : ''
        ]
          .join(' ')
          .trim()}
        aria-keyshortcuts={shortcut?.aria}
        rows={3}
        value={prompt}
        onChange={e => setPrompt(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="jp-AnalystPrompt-actions">
        {children}
        <button
          type="submit"
          className="jp-AnalystPrompt-send jp-Button jp-mod-styled jp-mod-accept"
          disabled={!canSubmit}
          title={unavailable ?? undefined}
          aria-describedby={unavailable ? 'jp-AnalystPrompt-unavailable' : undefined}
        >
          {sending ? 'Sending…' : 'Ask'}
        </button>
      </div>
      {unavailable && (
        <p className="jp-AnalystPrompt-unavailable" id="jp-AnalystPrompt-unavailable">
          {unavailable}
        </p>
      )}
    </form>
  );
}
