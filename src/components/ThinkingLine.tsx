import * as React from 'react';

import { useSecondsSince } from '../hooks/useSecondsSince';

/**
 * How long, said briefly: "" under a second (nothing to count yet), "12 s", "2 min 5 s".
 */
export function elapsedText(seconds: number | null): string {
  if (seconds === null || seconds < 1) {
    return '';
  }
  if (seconds < 60) {
    return `${seconds} s`;
  }
  const rest = seconds % 60;
  return `${Math.floor(seconds / 60)} min${rest ? ` ${rest} s` : ''}`;
}

/**
 * The model of a running turn is thinking before it answers, since `since`: said, with
 * how long, so a long silence reads as work. What it thinks is never sent to the panel.
 */
export function ThinkingLine({ since }: { since: string }): JSX.Element {
  const took = elapsedText(useSecondsSince(since));
  return (
    <div className="jp-AnalystThinking" data-thinking-since={since}>
      Thinking…
      {took && <span className="jp-AnalystThinking-elapsed">{took}</span>}
    </div>
  );
}
