import * as React from 'react';

import { useArtifactPreview } from '../../hooks/useArtifact';
import type { ArtifactView } from '../../model';
import { MimeOutput } from '../MimeOutput';
import { ArtifactCard } from './ArtifactCard';
import { ArtifactPreview } from './ArtifactPreview';
import { useStepNumbers } from './Details';
import { Lightbox } from './Lightbox';
import { artifactTitle } from './stepNames';

/** The chart at full size, from the same cached preview as the card's thumbnail. */
function FullChart({ artifactId }: { artifactId: string }): JSX.Element {
  const preview = useArtifactPreview(artifactId);
  if (preview.state === 'ready') {
    return <MimeOutput bundle={preview.value} className="jp-AnalystLightbox-chart" />;
  }
  return (
    <div className="jp-AnalystPreview-loading">
      {preview.state === 'loading'
        ? 'Loading the chart…'
        : `The chart cannot be shown: ${preview.message}`}
    </div>
  );
}

/**
 * A chart a step drew: the image as a notebook shows it (a click, or its "Enlarge" button,
 * opens it at full size), and the artifact it is stored as.
 */
export function ChartCard({
  artifact,
  reused
}: {
  artifact: ArtifactView;
  reused: boolean;
}): JSX.Element {
  const [large, setLarge] = React.useState(false);
  const title = artifactTitle(artifact.name, useStepNumbers());
  return (
    <figure
      className="jp-AnalystChart"
      data-card="chart"
      data-artifact-id={artifact.artifactId}
      data-reused={reused ? 'true' : 'false'}
    >
      <div className="jp-AnalystChart-thumb" onClick={() => setLarge(true)}>
        <ArtifactPreview artifactId={artifact.artifactId} label="chart" />
        <button
          type="button"
          className="jp-Button jp-mod-minimal jp-AnalystChart-enlarge"
          aria-label={`Enlarge ${title}`}
          title="Open the chart at full size"
          onClick={event => {
            event.stopPropagation();
            setLarge(true);
          }}
        >
          ⤢ Enlarge
        </button>
      </div>
      <figcaption>
        <ArtifactCard artifact={artifact} reused={reused} />
      </figcaption>
      {large && (
        <Lightbox label={title} onClose={() => setLarge(false)}>
          <FullChart artifactId={artifact.artifactId} />
        </Lightbox>
      )}
    </figure>
  );
}
