import * as React from 'react';

import { useAnalyst } from '../../context';
import { useArtifactMetadata } from '../../hooks/useArtifact';
import type { ArtifactView } from '../../model';
import { csvName, downloadName, PARQUET } from '../artifacts/format';
import { ReusedBadge } from './Badges';
import { Details, useStepNumbers } from './Details';
import { artifactTitle } from './stepNames';

/** A size in bytes as people read it. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) {
    return `${bytes} B`;
  }
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

export interface IArtifactCardProps {
  artifact: ArtifactView;
  /** Made by an earlier identical step (or already stored), not by this one. */
  reused: boolean;
}

/**
 * One artifact: its name as people read it (a figure by its number and step), type, size,
 * "reused", open and download (a dataset's rows as CSV too); its id, stored name and fingerprint behind its details.
 */
export function ArtifactCard({ artifact, reused }: IArtifactCardProps): JSX.Element {
  const { client } = useAnalyst();
  const meta = useArtifactMetadata(artifact.artifactId);
  const known = meta.state === 'ready' ? meta.value : null;
  const fingerprint = artifact.fingerprint || known?.fingerprint || '';
  const name = artifactTitle(artifact.name, useStepNumbers());
  const url = client.artifactContentUrl(artifact.artifactId);
  // Saved with its type's extension: a SQL dataset's name has none, its bytes are Parquet.
  const fileName = downloadName({
    name: artifact.name,
    mime: known?.mime ?? (artifact.artifactType === 'dataset' ? PARQUET : '')
  });
  return (
    <div
      className="jp-AnalystArtifact"
      data-card="artifact"
      data-artifact-id={artifact.artifactId}
      data-artifact-type={artifact.artifactType}
      data-reused={reused ? 'true' : 'false'}
    >
      <span className="jp-AnalystArtifact-name" title={name}>
        {name}
      </span>
      <span className="jp-AnalystArtifact-type">{artifact.artifactType}</span>
      {known && <span className="jp-AnalystArtifact-size">{formatSize(known.size)}</span>}
      {reused && <ReusedBadge />}
      <span className="jp-AnalystCard-spacer" />
      <a
        className="jp-AnalystArtifact-open"
        href={url}
        target="_blank"
        rel="noopener noreferrer"
        aria-label={`Open ${name}`}
      >
        Open
      </a>
      <a
        className="jp-AnalystArtifact-download"
        href={url}
        download={fileName}
        aria-label={`Download ${name}`}
      >
        Download
      </a>
      {artifact.artifactType === 'dataset' && (
        <a
          className="jp-AnalystArtifact-csv"
          href={client.artifactContentUrl(artifact.artifactId, 'csv')}
          download={csvName(artifact)}
          aria-label={`Download ${name} as CSV`}
          title="The rows as CSV, for a spreadsheet"
        >
          CSV
        </a>
      )}
      <Details
        entries={[
          ['Stored as', name === artifact.name ? null : artifact.name],
          ['Artifact id', artifact.artifactId],
          ['Fingerprint', fingerprint]
        ]}
      />
    </div>
  );
}
