import * as React from 'react';

import type { IServerConfig } from '../transport/api';
import { MODEL_FIX } from './ErrorBanner';

/** What the strip says of the server's model (its key is never sent, so never shown). */
export function modelLine(config: IServerConfig): string {
  const { model } = config;
  if (model.scripted) {
    return 'scripted model (offline, canned replies)';
  }
  const where = model.base_url ?? 'the provider’s default endpoint';
  return `${model.name ?? 'model'} at ${where}`;
}

/**
 * The model the server runs turns with, from `GET config`; a banner with the fix when
 * none is configured (no turn can run until one is).
 */
export function ModelStrip({ config }: { config: IServerConfig | null }): JSX.Element | null {
  if (config === null) {
    return null;
  }
  if (!config.model.configured) {
    return (
      <div
        className="jp-AnalystBanner jp-AnalystBanner-noModel"
        role="alert"
        data-reason="no_model"
      >
        <div className="jp-AnalystBanner-title">No model is configured</div>
        <div className="jp-AnalystBanner-message">
          Questions cannot be answered until the server has a model.
        </div>
        <div className="jp-AnalystBanner-hint">To fix: {config.model.hint ?? MODEL_FIX}</div>
      </div>
    );
  }
  return (
    <div
      className="jp-AnalystModel"
      data-scripted={config.model.scripted ? 'true' : 'false'}
      aria-label="Model"
      title={`Model: ${config.model.name ?? ''}${config.model.base_url ? `\nEndpoint: ${config.model.base_url}` : ''}`}
    >
      <span className="jp-AnalystModel-label">Model</span>
      <span className="jp-AnalystModel-name">{modelLine(config)}</span>
    </div>
  );
}
