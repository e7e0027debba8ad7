/**
 * The thread's artifact inventory for the Artifacts view: the list (of one type, or all),
 * read again when a turn ends; an artifact's preview; and the download of its bytes.
 */

import * as React from 'react';

import { useAnalyst } from '../context';
import { AnalystApiError, ContentFormat, IArtifact, IMimeBundle } from '../transport/api';

/** Rows of a dataset's preview. */
const PREVIEW_ROWS = 20;

/** What a request for a value is: not answered yet, its value, or the API's refusal. */
export type Requested<T> =
  { state: 'loading' } | { state: 'ready'; value: T } | { state: 'failed'; error: AnalystApiError };

function asApiError(reason: unknown): AnalystApiError {
  return reason instanceof AnalystApiError
    ? reason
    : new AnalystApiError(0, { message: String(reason), reason: null, hint: null });
}

/**
 * The thread's artifacts of `type` ('' is all of them). While a turn runs the list is
 * not read (it is read once the turn has ended, with all it made); a list shown stays
 * until the new one arrives.
 */
export function useInventory(
  threadId: string,
  type: IArtifact['type'] | '',
  running: boolean
): Requested<IArtifact[]> {
  const { client } = useAnalyst();
  const [inventory, setInventory] = React.useState<Requested<IArtifact[]>>({
    state: 'loading'
  });

  React.useEffect(() => {
    if (running) {
      return; // read once the turn has ended, with all it made
    }
    let current = true;
    setInventory(previous => (previous.state === 'ready' ? previous : { state: 'loading' }));
    client
      .artifacts(threadId, type || undefined)
      .then(value => current && setInventory({ state: 'ready', value }))
      .catch(reason => current && setInventory({ state: 'failed', error: asApiError(reason) }));
    return () => {
      current = false;
    };
  }, [client, threadId, type, running]);

  return inventory;
}

/** The download of an artifact's bytes, and its failure. */
export interface IDownload {
  downloading: boolean;
  error: AnalystApiError | null;
  /** Fetch the bytes and hand them to the browser as a file named `fileName`. */
  download: () => Promise<void>;
}

/** An artifact's bytes (a dataset's rows as CSV with `format` `'csv'`), saved as `fileName`. */
export function useDownload(
  artifactId: string,
  fileName: string,
  format?: ContentFormat
): IDownload {
  const { client } = useAnalyst();
  const [downloading, setDownloading] = React.useState(false);
  const [error, setError] = React.useState<AnalystApiError | null>(null);

  const download = async (): Promise<void> => {
    setDownloading(true);
    setError(null);
    try {
      // Through the client (token and XSRF headers), then a link to the bytes in memory.
      const blob = await client.artifactContent(artifactId, format);
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = fileName;
      document.body.appendChild(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 0);
    } catch (reason) {
      setError(asApiError(reason));
    } finally {
      setDownloading(false);
    }
  };

  return { downloading, error, download };
}

/** An artifact's preview from the server (a dataset's first rows, an image). */
export function useInventoryPreview(artifactId: string): Requested<IMimeBundle> {
  const { client } = useAnalyst();
  const [preview, setPreview] = React.useState<Requested<IMimeBundle>>({ state: 'loading' });

  React.useEffect(() => {
    let current = true;
    client
      .preview(artifactId, PREVIEW_ROWS)
      .then(value => current && setPreview({ state: 'ready', value }))
      .catch(reason => current && setPreview({ state: 'failed', error: asApiError(reason) }));
    return () => {
      current = false;
    };
  }, [client, artifactId]);

  return preview;
}
