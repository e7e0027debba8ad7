/**
 * After an export, the tabs showing the exported file: an export rewrites it on disk, so a
 * tab opened before would show the old notebook and, saved, overwrite the new one.
 */

import type { INotebookTracker } from '@jupyterlab/notebook';

/** What became of the open tabs of an exported path. */
export interface IRefreshed {
  /** Tabs reloaded from disk (they had no unsaved changes). */
  reloaded: number;
  /** Tabs left as they were: they have unsaved changes a reload would lose. */
  unsaved: number;
}

/** Reload the open, unchanged tabs of `path` from disk; count those with unsaved changes. */
export async function reloadOpenCopies(
  tracker: INotebookTracker | null,
  path: string
): Promise<IRefreshed> {
  const refreshed: IRefreshed = { reloaded: 0, unsaved: 0 };
  if (!tracker) {
    return refreshed;
  }
  const panels: Array<{ revert: () => Promise<void>; dirty: boolean }> = [];
  tracker.forEach(panel => {
    if (panel.context.path === path) {
      panels.push({
        revert: () => panel.context.revert(),
        dirty: panel.context.model.dirty
      });
    }
  });
  for (const panel of panels) {
    if (panel.dirty) {
      refreshed.unsaved++;
    } else {
      await panel.revert();
      refreshed.reloaded++;
    }
  }
  return refreshed;
}
