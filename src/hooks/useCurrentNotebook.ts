import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Title, Widget } from '@lumino/widgets';
import * as React from 'react';

/**
 * The notebook JupyterLab counts as current (the last one focused, still open), kept up
 * to date as notebooks are focused, closed and renamed (its title is shown); null when
 * none is open.
 */
export function useCurrentNotebook(tracker: INotebookTracker | null): NotebookPanel | null {
  const [current, setCurrent] = React.useState<NotebookPanel | null>(
    tracker?.currentWidget ?? null
  );
  const [, setLabel] = React.useState('');

  React.useEffect(() => {
    if (!tracker) {
      return;
    }
    const changed = (_: INotebookTracker, panel: NotebookPanel | null): void => setCurrent(panel);
    setCurrent(tracker.currentWidget);
    tracker.currentChanged.connect(changed);
    return () => {
      tracker.currentChanged.disconnect(changed);
    };
  }, [tracker]);

  // A new notebook is renamed after it opens ("Untitled.ipynb" first): show the new name.
  React.useEffect(() => {
    if (!current) {
      return;
    }
    const renamed = (title: Title<Widget>): void => setLabel(title.label);
    setLabel(current.title.label);
    current.title.changed.connect(renamed);
    return () => {
      current.title.changed.disconnect(renamed);
    };
  }, [current]);

  return current;
}
