/**
 * An artifact's metadata and preview for a card, from the shared cache
 * (src/transport/artifactCache.ts), re-rendered when they arrive.
 */

import { useEffect, useState } from 'react';

import { useAnalyst } from '../context';
import type { IArtifact, IMimeBundle } from '../transport/api';
import { artifactMetadata, artifactPreview } from '../transport/artifactCache';

/** What a loading value is: not yet, its value, or why it failed. */
export type Loaded<T> =
  { state: 'loading' } | { state: 'ready'; value: T } | { state: 'failed'; message: string };

/** The value of `load()` once it resolves (again whenever `key` changes). */
export function useLoaded<T>(key: string | null, load: () => Promise<T>): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  useEffect(() => {
    if (key === null) {
      return;
    }
    let live = true;
    setLoaded({ state: 'loading' });
    load().then(
      value => live && setLoaded({ state: 'ready', value }),
      (reason: unknown) =>
        live &&
        setLoaded({
          state: 'failed',
          message: reason instanceof Error ? reason.message : String(reason)
        })
    );
    return () => {
      live = false;
    };
    // `load` reads only what `key` names.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);
  return loaded;
}

/** The metadata of an artifact (size, fingerprint), fetched once per panel. */
export function useArtifactMetadata(artifactId: string): Loaded<IArtifact> {
  const { client } = useAnalyst();
  return useLoaded(artifactId, () => artifactMetadata(client, artifactId));
}

/** The preview of an artifact as a notebook output shows it, fetched once per panel. */
export function useArtifactPreview(artifactId: string): Loaded<IMimeBundle> {
  const { client } = useAnalyst();
  return useLoaded(artifactId, () => artifactPreview(client, artifactId));
}
