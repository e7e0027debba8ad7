import * as React from 'react';

import { useArtifactPreview } from '../../hooks/useArtifact';
import type { IMimeBundle } from '../../transport/api';
import { DataTable, tablePreviewOf } from '../artifacts/DataTable';
import { MimeOutput } from '../MimeOutput';
import { useCitedCells, type ICitedCell } from '../receipts/citedFocus';

function ReadyPreview({
  bundle,
  cited
}: {
  bundle: IMimeBundle;
  cited: ICitedCell[];
}): JSX.Element {
  const table = tablePreviewOf(bundle);
  return table !== null ? (
    <DataTable table={table} cited={cited} />
  ) : (
    <MimeOutput bundle={bundle} />
  );
}

export interface IArtifactPreviewProps {
  artifactId: string;
  /** What the preview shows, for screen readers ("table", "chart"). */
  label: string;
}

/**
 * An artifact as a notebook output shows it: a dataset's first rows (formatted as pandas
 * displays them), an image.
 */
export function ArtifactPreview({ artifactId, label }: IArtifactPreviewProps): JSX.Element {
  const preview = useArtifactPreview(artifactId);
  const cited = useCitedCells(artifactId);
  return (
    <div
      className="jp-AnalystPreview"
      data-artifact-id={artifactId}
      data-state={preview.state}
      role="group"
      aria-label={label}
    >
      {preview.state === 'loading' && (
        <div className="jp-AnalystPreview-loading">Loading the {label}…</div>
      )}
      {preview.state === 'failed' && (
        <div className="jp-AnalystPreview-failed">
          The {label} cannot be shown: {preview.message}
        </div>
      )}
      {preview.state === 'ready' && <ReadyPreview bundle={preview.value} cited={cited} />}
    </div>
  );
}
