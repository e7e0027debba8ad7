import * as React from 'react';

import type { ArtifactView } from '../../model';
import { ArtifactCard } from './ArtifactCard';
import { ArtifactPreview } from './ArtifactPreview';

/** A chart a step drew: the image as a notebook shows it, and the artifact it is stored as. */
export function ChartCard({
  artifact,
  reused
}: {
  artifact: ArtifactView;
  reused: boolean;
}): JSX.Element {
  return (
    <figure
      className="jp-AnalystChart"
      data-card="chart"
      data-artifact-id={artifact.artifactId}
      data-reused={reused ? 'true' : 'false'}
    >
      <ArtifactPreview artifactId={artifact.artifactId} label="chart" />
      <figcaption>
        <ArtifactCard artifact={artifact} reused={reused} />
      </figcaption>
    </figure>
  );
}
