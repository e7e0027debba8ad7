import * as React from 'react';

import { errorHeading, saidByHeading, type ToolError as ToolErrorView } from '../../model';
import { useStepNumbers } from './Details';
import { errorLines, withStepNames } from './stepNames';

/**
 * A step's error, said once: a heading in words (never its code), the line that says what
 * went wrong (a traceback's last, the whole one behind a toggle), the hint and the close
 * names when the message does not already say them. A refusal whose heading says it all
 * ("Refused: the query would change data") shows the heading alone.
 */
export function ToolError({ error }: { error: ToolErrorView }): JSX.Element {
  const numbers = useStepNumbers();
  if (saidByHeading(error.reason)) {
    return (
      <div className="jp-AnalystCard-error" data-reason={error.reason}>
        <div className="jp-AnalystCard-errorReason">{errorHeading(error.reason)}</div>
      </div>
    );
  }
  const message = withStepNames(error.message, numbers);
  const { last, full } = errorLines(message);
  const hint = error.hint && !message.includes(error.hint) ? error.hint : null;
  const suggestions =
    error.suggestions && error.suggestions.length > 0 && !/did you mean/i.test(message)
      ? error.suggestions
      : [];
  return (
    <div className="jp-AnalystCard-error" data-reason={error.reason}>
      <div className="jp-AnalystCard-errorReason">{errorHeading(error.reason)}</div>
      {last && <div className="jp-AnalystCard-errorMessage">{last}</div>}
      {full !== null && (
        <details className="jp-AnalystCard-traceback">
          <summary>Full traceback</summary>
          <pre>{full}</pre>
        </details>
      )}
      {hint && <div className="jp-AnalystCard-hint">{hint}</div>}
      {suggestions.length > 0 && (
        <div className="jp-AnalystCard-hint">Did you mean: {suggestions.join(', ')}?</div>
      )}
    </div>
  );
}
