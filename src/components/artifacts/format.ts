/**
 * How artifacts are shown in a narrow sidebar: by the names the cards use (a figure by its
 * number and step, a step by its number and question), sizes, file names; short
 * fingerprints for the details.
 */

import type { IArtifact } from '../../transport/api';
import { artifactTitle, type IStepPlace } from '../cards/stepNames';

/**
 * An artifact's name as the cards say it: a figure the kernel named after its call is
 * "Figure 1 of step 3"; any other name is its own.
 */
export function inventoryTitle(
  artifact: Pick<IArtifact, 'name'>,
  places: ReadonlyMap<string, IStepPlace>
): string {
  const numbers = new Map([...places].map(([callId, place]) => [callId, place.step]));
  return artifactTitle(artifact.name, numbers);
}

const PRODUCERS: Record<IArtifact['producer'], string> = { sql: 'SQL', python: 'Python' };

/**
 * The step that made an artifact, in words: "step 2" in a thread of one question, "step 2
 * of question 3" in a longer one; a step the view does not hold (yet) by its tool only.
 * Its `title` names the question by its words.
 */
export function madeBy(
  artifact: Pick<IArtifact, 'source_call_id' | 'producer'>,
  places: ReadonlyMap<string, IStepPlace>,
  questions: number
): { text: string; title: string } {
  const place = artifact.source_call_id ? places.get(artifact.source_call_id) : undefined;
  if (place === undefined) {
    const tool = PRODUCERS[artifact.producer] ?? artifact.producer;
    return { text: `a ${tool} step`, title: `Made by a ${tool} step` };
  }
  const text =
    questions > 1 ? `step ${place.step} of question ${place.turn}` : `step ${place.step}`;
  const asked = place.prompt.trim() ? ` “${place.prompt.trim()}”` : '';
  return { text, title: `Made by step ${place.step} of question ${place.turn}${asked}` };
}

/**
 * The first 12 hex digits of a fingerprint (`sha256:…`), as `jupyter analyst verify`
 * prints them; enough to tell two versions apart at a glance.
 */
export function shortFingerprint(fingerprint: string | null | undefined): string {
  if (!fingerprint) {
    return '—';
  }
  const colon = fingerprint.indexOf(':');
  return fingerprint.slice(colon + 1, colon + 13);
}

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** A byte count in the largest unit under 1024 of it (1 decimal from KB on). */
export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** File extensions of the MIME types artifacts have (the first one added), for a download's name. */
const EXTENSIONS: Record<string, string[]> = {
  'application/vnd.apache.parquet': ['.parquet', '.pq'],
  'application/json': ['.json'],
  'application/pdf': ['.pdf'],
  'image/png': ['.png'],
  'image/jpeg': ['.jpg', '.jpeg'],
  'image/gif': ['.gif'],
  'image/svg+xml': ['.svg'],
  'text/csv': ['.csv'],
  'text/tab-separated-values': ['.tsv'],
  'text/plain': ['.txt'],
  'text/html': ['.html', '.htm'],
  'text/markdown': ['.md']
};

/** The Parquet type a dataset always has. */
export const PARQUET = 'application/vnd.apache.parquet';

/**
 * The name a download is saved under: the artifact's, ending with its type's extension
 * (added when it has another or none), as the server names it.
 */
export function downloadName(artifact: Pick<IArtifact, 'name' | 'mime'>): string {
  const base = artifact.name.split('/').pop() || 'artifact';
  const extensions = EXTENSIONS[artifact.mime.split(';')[0].trim().toLowerCase()];
  if (!extensions || extensions.some(ext => base.toLowerCase().endsWith(ext))) {
    return base;
  }
  return base + extensions[0];
}

/** The name a dataset's CSV is saved under: its own, `.csv` for `.parquet` (as the server names it). */
export function csvName(artifact: Pick<IArtifact, 'name'>): string {
  const base = artifact.name.split('/').pop() || 'dataset';
  return base.replace(/\.(parquet|pq)$/i, '') + '.csv';
}

/** A timestamp as local date and time to the minute (the ISO text when unreadable). */
export function formatWhen(iso: string): string {
  const date = new Date(iso);
  if (isNaN(date.getTime())) {
    return iso;
  }
  const pad = (n: number): string => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/** Whether an artifact has a preview worth showing inline (a table, an image, text). */
export function canPreview(artifact: Pick<IArtifact, 'type' | 'mime'>): boolean {
  return (
    artifact.type === 'dataset' ||
    artifact.type === 'text' ||
    artifact.mime.startsWith('image/') ||
    artifact.mime.startsWith('text/') ||
    artifact.mime === 'application/json'
  );
}
