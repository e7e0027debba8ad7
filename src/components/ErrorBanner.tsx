import * as React from 'react';

import type { AnalystApiError } from '../transport/api';

/** How to give the server a model: the fix the no-model banner shows. */
export const MODEL_FIX =
  'Set c.AnalystApp.model, c.AnalystApp.model_base_url and c.AnalystApp.api_key in the ' +
  'Jupyter server configuration (or OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL in ' +
  "the server's environment), then restart JupyterLab.";

export interface IErrorBannerProps {
  error: AnalystApiError;
  onDismiss?: () => void;
}

/**
 * A refusal or failure of the API, in words: its message and the server's hint. No
 * model configured gets a banner of its own with the fix.
 */
export function ErrorBanner({ error, onDismiss }: IErrorBannerProps): JSX.Element {
  const noModel = error.isNoModel;
  return (
    <div
      className={`jp-AnalystBanner ${noModel ? 'jp-AnalystBanner-noModel' : 'jp-AnalystBanner-error'}`}
      role="alert"
      data-reason={error.reason ?? ''}
    >
      <div className="jp-AnalystBanner-title">
        {noModel ? 'No model is configured' : error.message}
      </div>
      {noModel && <div className="jp-AnalystBanner-message">{error.message}</div>}
      {error.hint && <div className="jp-AnalystBanner-hint">{error.hint}</div>}
      {noModel && <div className="jp-AnalystBanner-hint">{MODEL_FIX}</div>}
      {onDismiss && (
        <button
          type="button"
          className="jp-AnalystBanner-dismiss jp-mod-minimal jp-Button"
          aria-label="Dismiss"
          onClick={onDismiss}
        >
          ×
        </button>
      )}
    </div>
  );
}
