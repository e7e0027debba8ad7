/**
 * Artifacts are content-addressed and never change: their metadata and previews are
 * fetched once per client and shared by every card that shows them (a re-render or a
 * reused step asks again for nothing). The React half is src/hooks/useArtifact.ts.
 */

import { AnalystClient, IArtifact, IMimeBundle } from './api';

const metadata = new WeakMap<AnalystClient, Map<string, Promise<IArtifact>>>();
const previews = new WeakMap<AnalystClient, Map<string, Promise<IMimeBundle>>>();

function cached<T>(
  store: WeakMap<AnalystClient, Map<string, Promise<T>>>,
  client: AnalystClient,
  key: string,
  load: () => Promise<T>
): Promise<T> {
  let byKey = store.get(client);
  if (byKey === undefined) {
    byKey = new Map();
    store.set(client, byKey);
  }
  let found = byKey.get(key);
  if (found === undefined) {
    found = load();
    // A failure is not kept: the next card to ask tries again.
    found.catch(() => byKey?.delete(key));
    byKey.set(key, found);
  }
  return found;
}

/** The number of rows a card's table preview shows. */
export const PREVIEW_ROWS = 10;

export function artifactMetadata(client: AnalystClient, artifactId: string): Promise<IArtifact> {
  return cached(metadata, client, artifactId, () => client.artifact(artifactId));
}

export function artifactPreview(client: AnalystClient, artifactId: string): Promise<IMimeBundle> {
  return cached(previews, client, artifactId, () => client.preview(artifactId, PREVIEW_ROWS));
}
