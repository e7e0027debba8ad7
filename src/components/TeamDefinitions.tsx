import * as React from 'react';

import { useSaveDefinition } from '../hooks/useSaveDefinition';
import { definitionLine } from '../model/definitions';
import type { DefinitionCitation, MetricSuggestion } from '../model/events';

export interface IDefinitionsUsedProps {
  definitions: readonly DefinitionCitation[];
}

/** The team's definitions the answer's queries followed, each with the file that writes it. */
export function DefinitionsUsed({ definitions }: IDefinitionsUsedProps): JSX.Element | null {
  if (definitions.length === 0) {
    return null;
  }
  return (
    <div className="jp-AnalystDefinitionsUsed" data-definitions={definitions.length}>
      <span className="jp-AnalystDefinitionsUsed-label">Definitions used: </span>
      {definitions.map((d, i) => (
        <span
          key={`${d.definition}:${d.name}`}
          className="jp-AnalystDefinitionsUsed-item"
          title={d.file}
        >
          {i > 0 ? '; ' : ''}
          {definitionLine(d)}
        </span>
      ))}
    </div>
  );
}

export interface ISuggestedDefinitionProps {
  threadId: string;
  /** The turn's number in its thread (1 for the first). */
  turn: number;
  /** Which of the turn's suggestions. */
  index: number;
  suggestion: MetricSuggestion;
}

/**
 * A measure the turn computed that the team's context lacks, and "Save as a definition":
 * the file is shown first (nothing written), and written only on "Save". The SQL is the
 * model's: shown as text.
 */
export function SuggestedDefinition({
  threadId,
  turn,
  index,
  suggestion
}: ISuggestedDefinitionProps): JSX.Element {
  const { busy, preview, outcome, show, save, cancel } = useSaveDefinition(threadId, turn, index);
  const saved = outcome?.kind === 'saved';
  return (
    <div
      className="jp-AnalystSuggestion"
      data-outcome={outcome?.kind ?? (preview ? 'shown' : 'none')}
    >
      <div className="jp-AnalystSuggestion-measure">
        Not defined in the team’s context: <code>{suggestion.measure}</code>
      </div>
      {!saved && preview === null && (
        <button
          type="button"
          className="jp-Button jp-mod-styled jp-mod-minimal jp-AnalystSuggestion-button"
          disabled={busy}
          title={`Show the metric ${suggestion.name} as it would be saved to the team's context folder`}
          onClick={() => void show()}
        >
          {busy ? 'Preparing…' : '＋ Save as a definition'}
        </button>
      )}
      {preview !== null && (
        <div
          className="jp-AnalystSuggestion-confirm"
          role="dialog"
          aria-label="Save as a definition"
        >
          <div className="jp-AnalystSuggestion-file">{preview.file}</div>
          <pre className="jp-AnalystSuggestion-yaml">{preview.yaml}</pre>
          <button
            type="button"
            className="jp-Button jp-mod-styled jp-mod-accept jp-AnalystSuggestion-save"
            disabled={busy}
            onClick={() => void save()}
          >
            {busy ? 'Saving…' : 'Save'}
          </button>
          <button
            type="button"
            className="jp-Button jp-mod-styled jp-mod-reject jp-AnalystSuggestion-cancel"
            disabled={busy}
            onClick={cancel}
          >
            Cancel
          </button>
        </div>
      )}
      <div className="jp-AnalystSuggestion-outcome" role="status">
        {outcome?.text ?? ''}
      </div>
    </div>
  );
}
