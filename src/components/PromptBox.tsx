import * as React from 'react';

export interface IPromptBoxProps {
  /** A turn runs: the box keeps its text but does not submit. */
  busy: boolean;
  onSubmit: (prompt: string) => void;
  /** Enter submits (Shift+Enter adds a line); off: Ctrl/Cmd+Enter submits. */
  submitOnEnter?: boolean;
  /** Changes when the box should take the focus (a turn ended). */
  focusToken?: number;
  /** Shown beside the send button (Stop, while a turn runs). */
  children?: React.ReactNode;
}

/** Where the user asks: Enter submits, Shift+Enter starts a new line. */
export function PromptBox({
  busy,
  onSubmit,
  submitOnEnter = true,
  focusToken = 0,
  children
}: IPromptBoxProps): JSX.Element {
  const [prompt, setPrompt] = React.useState('');
  const input = React.useRef<HTMLTextAreaElement>(null);
  const canSubmit = !busy && prompt.trim().length > 0;

  React.useEffect(() => {
    if (focusToken > 0) {
      input.current?.focus();
    }
  }, [focusToken]);

  const submit = (): void => {
    if (canSubmit) {
      onSubmit(prompt);
      setPrompt('');
    }
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
        placeholder={
          submitOnEnter
            ? 'Ask about your data (Enter to send, Shift+Enter for a new line)'
            : 'Ask about your data (Ctrl+Enter to send)'
        }
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
        >
          Ask
        </button>
      </div>
    </form>
  );
}
