import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import * as React from 'react';

/**
 * The notebook JupyterLab counts as current (the last one focused, still open), kept up
 * to date as notebooks are focused and closed; null when none is open.
 */
export function useCurrentNotebook(tracker: INotebookTracker | null): NotebookPanel | null {
  const [current, setCurrent] = React.useState<NotebookPanel | null>(
    tracker?.currentWidget ?? null
  );
  React.useEffect(() => {
    if (!tracker) {
      return;
    }
    const changed = (_: INotebookTracker, panel: NotebookPanel | null): void =>
      setCurrent(panel);
    setCurrent(tracker.currentWidget);
    tracker.currentChanged.connect(changed);
    return () => {
      tracker.currentChanged.disconnect(changed);
    };
  }, [tracker]);
  return current;
}
