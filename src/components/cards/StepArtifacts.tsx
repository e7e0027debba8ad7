import * as React from 'react';

import type { CardArtifact } from './cardArtifacts';
import { ArtifactCard } from './ArtifactCard';
import { ChartCard } from './ChartCard';

/** A step's artifacts: charts drawn, the rest as one line each. */
export function StepArtifacts({ artifacts }: { artifacts: CardArtifact[] }): JSX.Element | null {
  if (!artifacts.length) {
    return null;
  }
  return (
    <div className="jp-AnalystCard-artifacts">
      {artifacts.map(({ artifact, reused }) =>
        artifact.artifactType === 'image' ? (
          <ChartCard key={artifact.artifactId} artifact={artifact} reused={reused} />
        ) : (
          <ArtifactCard key={artifact.artifactId} artifact={artifact} reused={reused} />
        )
      )}
    </div>
  );
}
