import * as React from 'react';

import { reasonText, type ToolError as ToolErrorView } from '../../model';

/** A step's error: what went wrong in plain words, the server's message and its hint. */
export function ToolError({ error }: { error: ToolErrorView }): JSX.Element {
  return (
    <div className="jp-AnalystCard-error" role="alert" data-reason={error.reason}>
      <div className="jp-AnalystCard-errorReason">{reasonText(error.reason)}</div>
      {error.message && <pre className="jp-AnalystCard-errorMessage">{error.message}</pre>}
      {error.hint && <div className="jp-AnalystCard-hint">{error.hint}</div>}
      {error.suggestions && error.suggestions.length > 0 && (
        <div className="jp-AnalystCard-hint">Did you mean: {error.suggestions.join(', ')}?</div>
      )}
    </div>
  );
}
