import * as React from 'react';

import { useAnalyst } from '../../context';
import { useArtifactMetadata } from '../../hooks/useArtifact';
import type { ArtifactView } from '../../model';
import { ReusedBadge } from './Badges';

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

/** One artifact: name, type, size, short fingerprint, "reused", open and download. */
export function ArtifactCard({ artifact, reused }: IArtifactCardProps): JSX.Element {
  const { client } = useAnalyst();
  const meta = useArtifactMetadata(artifact.artifactId);
  const known = meta.state === 'ready' ? meta.value : null;
  const fingerprint =
    artifact.shortFingerprint || (known?.fingerprint ?? '').replace(/^sha256:/, '').slice(0, 12);
  const url = client.artifactContentUrl(artifact.artifactId);
  const fileName = artifact.name.split('/').pop() ?? artifact.name;
  return (
    <div
      className="jp-AnalystArtifact"
      data-card="artifact"
      data-artifact-id={artifact.artifactId}
      data-artifact-type={artifact.artifactType}
      data-reused={reused ? 'true' : 'false'}
    >
      <span className="jp-AnalystArtifact-name" title={artifact.name}>
        {artifact.name}
      </span>
      <span className="jp-AnalystArtifact-type">{artifact.artifactType}</span>
      {known && <span className="jp-AnalystArtifact-size">{formatSize(known.size)}</span>}
      {fingerprint && (
        <code
          className="jp-AnalystArtifact-fingerprint"
          title={artifact.fingerprint || known?.fingerprint}
        >
          {fingerprint}
        </code>
      )}
      {reused && <ReusedBadge />}
      <span className="jp-AnalystCard-spacer" />
      <a
        className="jp-AnalystArtifact-open"
        href={url}
        target="_blank"
        rel="noopener noreferrer"
        aria-label={`Open ${artifact.name}`}
      >
        Open
      </a>
      <a
        className="jp-AnalystArtifact-download"
        href={url}
        download={fileName}
        aria-label={`Download ${artifact.name}`}
      >
        Download
      </a>
    </div>
  );
}
