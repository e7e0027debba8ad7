import * as React from 'react';

export interface IPromptBoxProps {
  /** A turn runs: the box keeps its text but does not submit. */
  busy: boolean;
  onSubmit: (prompt: string) => void;
  /** Enter submits (Shift+Enter adds a line); off: Ctrl/Cmd+Enter submits. */
  submitOnEnter?: boolean;
}

/** Where the user asks: Enter submits, Shift+Enter starts a new line. */
export function PromptBox({
  busy,
  onSubmit,
  submitOnEnter = true
}: IPromptBoxProps): JSX.Element {
  const [prompt, setPrompt] = React.useState('');
  const canSubmit = !busy && prompt.trim().length > 0;

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
    const wantsSubmit = submitOnEnter
      ? !event.shiftKey
      : event.ctrlKey || event.metaKey;
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
        className="jp-AnalystPrompt-input"
        aria-label="Ask about your data"
        placeholder="Ask about your data (Enter to send, Shift+Enter for a new line)"
        rows={3}
        value={prompt}
        onChange={e => setPrompt(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <button
        type="submit"
        className="jp-AnalystPrompt-send jp-Button jp-mod-styled jp-mod-accept"
        disabled={!canSubmit}
      >
        Ask
      </button>
    </form>
  );
}
