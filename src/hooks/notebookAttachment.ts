/**
 * Which notebook a question carries: the one in front (followed as the user moves between
 * notebooks), one the user chose from those open, or none (detached). Pure: the hook
 * (useAttachedNotebook.ts) feeds it the open notebooks and the one in front.
 */

/** An open notebook as the chip names it. */
export interface IOpenNotebook {
  /** The widget's id: a choice holds across a rename (the path changes, the id does not). */
  id: string;
  /** Its path in the user's Jupyter folder: what the server reads. */
  path: string;
  /** Its file name. */
  name: string;
}

/** What the user said about the notebook to carry. */
export type AttachChoice =
  { kind: 'follow' } | { kind: 'chosen'; id: string } | { kind: 'detached' };

export const FOLLOW: AttachChoice = { kind: 'follow' };

/**
 * The choice as it stands with these notebooks open: a chosen notebook since closed gives
 * way to following the one in front again.
 *
 * ```ts
 * choiceNow({ kind: 'chosen', id: 'nb-2' }, [])  // { kind: 'follow' }
 * ```
 */
export function choiceNow(choice: AttachChoice, open: readonly IOpenNotebook[]): AttachChoice {
  if (choice.kind === 'chosen' && !open.some(n => n.id === choice.id)) {
    return FOLLOW;
  }
  return choice;
}

/**
 * The notebook the next question carries: none when detached, the chosen one while it is
 * open, else the one in front (`frontId`, null when no notebook is open).
 */
export function attachedOf(
  choice: AttachChoice,
  open: readonly IOpenNotebook[],
  frontId: string | null
): IOpenNotebook | null {
  const now = choiceNow(choice, open);
  if (now.kind === 'detached') {
    return null;
  }
  const id = now.kind === 'chosen' ? now.id : frontId;
  return open.find(n => n.id === id) ?? null;
}

/** Where the export (jupyter_analyst/notebooks/export.py) writes a notebook's provenance. */
export const AUDIT_METADATA_KEY = 'jupyter_analyst';

/**
 * Whether a notebook's `jupyter_analyst` metadata is a thread's audit notebook's: the
 * export writes the thread's id and its format there (cells inserted into the user's own
 * notebooks carry theirs on the cell, never on the notebook). A question never carries
 * such a notebook: it is the record of a thread, not the user's work, whatever its name.
 *
 * ```ts
 * isAuditNotebook({ format: 2, thread_id: 't-1' })  // true
 * isAuditNotebook(undefined)                         // false
 * ```
 */
export function isAuditNotebook(metadata: unknown): boolean {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    return false;
  }
  const meta = metadata as Record<string, unknown>;
  return typeof meta.thread_id === 'string' && typeof meta.format === 'number';
}

/** A path's file name: `analysis.ipynb` of `work/q3/analysis.ipynb`. */
export function notebookName(path: string): string {
  return path.split('/').pop() || path;
}
