import * as React from 'react';

import { useAnalyst } from '../../context';
import { useDownload, useInventory, useInventoryPreview } from '../../hooks/useInventory';
import type { TurnView } from '../../model';
import type { IArtifact } from '../../transport/api';
import { Details } from '../cards/Details';
import { stepPlaces, type IStepPlace } from '../cards/stepNames';
import {
  canPreview,
  csvName,
  downloadName,
  formatSize,
  formatWhen,
  inventoryTitle,
  madeBy
} from './format';
import { DataTable, tablePreviewOf } from './DataTable';
import { MimeView } from './MimeView';

/** The artifact types of the inventory, for the filter ('' is all of them). */
export const ARTIFACT_TYPES: ReadonlyArray<IArtifact['type']> = [
  'dataset',
  'image',
  'file',
  'text'
];

export interface IArtifactsPanelProps {
  threadId: string;
  /** A turn is running: the inventory is read again when it ends. */
  running: boolean;
  /** The thread's turns, whose steps name what made each artifact (none: by its tool). */
  turns?: readonly TurnView[];
}

/**
 * The thread's artifact inventory: what (by the cards' names), of which type, when, from
 * which step, its size; its ids and fingerprint behind its details; filtered by type; a
 * preview of tables and images rendered as notebook outputs; a download of the bytes.
 */
export function ArtifactsPanel({
  threadId,
  running,
  turns = []
}: IArtifactsPanelProps): JSX.Element {
  const [type, setType] = React.useState<IArtifact['type'] | ''>('');
  const inventory = useInventory(threadId, type, running);
  const [open, setOpen] = React.useState<string | null>(null);
  const places = React.useMemo(() => stepPlaces(turns), [turns]);

  return (
    <section className="jp-AnalystArtifacts" aria-label="Artifacts">
      <div className="jp-AnalystArtifacts-toolbar">
        <label className="jp-AnalystArtifacts-filter">
          Type
          <select
            className="jp-mod-styled"
            value={type}
            onChange={event => setType(event.target.value as IArtifact['type'] | '')}
          >
            <option value="">all</option>
            {ARTIFACT_TYPES.map(t => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {running && <span className="jp-AnalystArtifacts-note">updated when the turn ends</span>}
      </div>
      {inventory.state === 'loading' && (
        <p className="jp-AnalystArtifacts-empty">Loading the inventory…</p>
      )}
      {inventory.state === 'failed' && (
        <p className="jp-AnalystArtifacts-error" role="alert">
          {inventory.error.message}
        </p>
      )}
      {inventory.state === 'ready' && inventory.value.length === 0 && (
        <p className="jp-AnalystArtifacts-empty">
          {type ? `No ${type} artifacts in this thread.` : 'No artifacts in this thread yet.'}
        </p>
      )}
      {inventory.state === 'ready' && inventory.value.length > 0 && (
        <ul className="jp-AnalystArtifacts-list">
          {inventory.value.map(artifact => (
            <ArtifactItem
              key={artifact.artifact_id}
              artifact={artifact}
              places={places}
              questions={turns.length}
              open={open === artifact.artifact_id}
              onToggle={() =>
                setOpen(current => (current === artifact.artifact_id ? null : artifact.artifact_id))
              }
            />
          ))}
        </ul>
      )}
    </section>
  );
}

interface IArtifactItemProps {
  artifact: IArtifact;
  places: ReadonlyMap<string, IStepPlace>;
  questions: number;
  open: boolean;
  onToggle: () => void;
}

/**
 * One artifact: its name and line of facts in words, Preview and Download (and CSV for a
 * dataset), its ids and
 * fingerprint behind its details, and the preview when open.
 */
function ArtifactItem({
  artifact,
  places,
  questions,
  open,
  onToggle
}: IArtifactItemProps): JSX.Element {
  const { downloading, error, download } = useDownload(
    artifact.artifact_id,
    downloadName(artifact)
  );
  const csv = useDownload(artifact.artifact_id, csvName(artifact), 'csv');
  const failed = error ?? csv.error;
  const title = inventoryTitle(artifact, places);
  const made = madeBy(artifact, places, questions);

  return (
    <li
      className="jp-AnalystInventory-item"
      data-artifact-id={artifact.artifact_id}
      data-artifact-type={artifact.type}
    >
      <div className="jp-AnalystInventory-item-head">
        <span className="jp-AnalystInventory-item-name" title={title}>
          {title}
        </span>
        <span className="jp-AnalystInventory-item-type">{artifact.type}</span>
      </div>
      <div className="jp-AnalystInventory-item-facts">
        <span title={artifact.created_at}>{formatWhen(artifact.created_at)}</span>
        <span className="jp-AnalystInventory-item-step" title={made.title}>
          {made.text}
        </span>
        <span className="jp-AnalystInventory-item-size">{formatSize(artifact.size)}</span>
      </div>
      <div className="jp-AnalystInventory-item-actions">
        {canPreview(artifact) && (
          <button
            type="button"
            className="jp-Button jp-mod-minimal jp-mod-styled"
            aria-expanded={open}
            onClick={onToggle}
          >
            {open ? 'Hide preview' : 'Preview'}
          </button>
        )}
        <button
          type="button"
          className="jp-Button jp-mod-minimal jp-mod-styled"
          disabled={downloading}
          onClick={() => void download()}
        >
          {downloading ? 'Downloading…' : 'Download'}
        </button>
        {artifact.type === 'dataset' && (
          <button
            type="button"
            className="jp-Button jp-mod-minimal jp-mod-styled jp-AnalystInventory-csv"
            disabled={csv.downloading}
            aria-label={`Download ${title} as CSV`}
            title="The rows as CSV, for a spreadsheet"
            onClick={() => void csv.download()}
          >
            {csv.downloading ? 'Converting…' : 'CSV'}
          </button>
        )}
      </div>
      {failed && (
        <p className="jp-AnalystArtifacts-error" role="alert">
          {failed.message}
        </p>
      )}
      <Details
        entries={[
          ['Stored as', title === artifact.name ? null : artifact.name],
          ['Step id', artifact.source_call_id],
          ['Artifact id', artifact.artifact_id],
          ['Fingerprint', artifact.fingerprint]
        ]}
      />
      {open && <ArtifactPreview artifactId={artifact.artifact_id} />}
    </li>
  );
}

/** An artifact's preview from the server, rendered as a notebook output. */
function ArtifactPreview({ artifactId }: { artifactId: string }): JSX.Element {
  const { rendermime } = useAnalyst();
  const preview = useInventoryPreview(artifactId);
  const table = preview.state === 'ready' ? tablePreviewOf(preview.value) : null;

  return (
    <div className="jp-AnalystInventory-item-preview">
      {preview.state === 'loading' && <span>Loading the preview…</span>}
      {preview.state === 'failed' && (
        <span className="jp-AnalystArtifacts-error" role="alert">
          {preview.error.message}
        </span>
      )}
      {table !== null && <DataTable table={table} />}
      {preview.state === 'ready' && table === null && (
        <MimeView bundle={preview.value} rendermime={rendermime} />
      )}
    </div>
  );
}
