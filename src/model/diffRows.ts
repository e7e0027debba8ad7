/**
 * A replaced cell's lines (kept, removed, added) as two columns, the cell as it is on the
 * left and as proposed on the right: a kept line on both sides; between two kept lines (a
 * hunk), the removed lines beside the added ones, line for line, the longer side against
 * blanks. nbdime may interleave them (a line patched, then a line added, then one removed):
 * within a hunk the order of each side is kept, not the interleaving.
 */

import type { IDiffLine } from './proposals';

/** One side of a row: a line of the cell now (`same` or `del`) or as proposed (`same` or `add`). */
export type DiffSide = IDiffLine | null;

/** One row of the side-by-side view. */
export interface IDiffRow {
  before: DiffSide;
  after: DiffSide;
}

export function sideBySideRows(lines: IDiffLine[]): IDiffRow[] {
  const rows: IDiffRow[] = [];
  let removed: IDiffLine[] = [];
  let added: IDiffLine[] = [];
  const flush = (): void => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      rows.push({ before: removed[i] ?? null, after: added[i] ?? null });
    }
    removed = [];
    added = [];
  };
  for (const line of lines) {
    if (line.kind === 'same') {
      flush();
      rows.push({ before: line, after: line });
    } else if (line.kind === 'del') {
      removed.push(line);
    } else {
      added.push(line);
    }
  }
  flush();
  return rows;
}
