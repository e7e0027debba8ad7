/**
 * The notebook the next question carries, for React: the notebooks open in JupyterLab
 * (kept up to date as they open, close, come to the front and are renamed) and the user's
 * choice among them (notebookAttachment.ts).
 */

import type { ISignal } from '@lumino/signaling';
import * as React from 'react';

import {
  attachedOf,
  AttachChoice,
  choiceNow,
  AUDIT_METADATA_KEY,
  FOLLOW,
  IOpenNotebook,
  isAuditNotebook,
  notebookName
} from './notebookAttachment';

/** What the hook reads of a notebook widget (a NotebookPanel is one). */
export interface INotebookWidget {
  readonly id: string;
  readonly isDisposed: boolean;
  readonly disposed: ISignal<unknown, void>;
  readonly context: {
    readonly path: string;
    readonly pathChanged: ISignal<unknown, string>;
    /** Resolved once the file is read: its metadata is known from then on. */
    readonly ready?: Promise<void>;
    /** The notebook's model, read for its metadata (an audit notebook is never carried). */
    readonly model?: { getMetadata(key: string): unknown } | null;
  };
}

/** What the hook reads of JupyterLab's notebook tracker (an INotebookTracker is one). */
export interface INotebookList<W extends INotebookWidget = INotebookWidget> {
  readonly currentWidget: W | null;
  readonly currentChanged: ISignal<unknown, W | null>;
  readonly widgetAdded: ISignal<unknown, W>;
  filter(fn: (widget: W) => boolean): W[];
}

/** The attachment as the chip shows it, and what the user can do to it. */
export interface IAttachedNotebook {
  /** The notebooks open now, in the order they were opened. */
  open: IOpenNotebook[];
  /** The user's choice as it stands (a closed chosen notebook gives way to following). */
  choice: AttachChoice;
  /** The notebook the next question carries, or null. */
  attached: IOpenNotebook | null;
  /** Carry this open notebook, whichever is in front. */
  choose: (id: string) => void;
  /** Carry the notebook in front, whichever it is. */
  follow: () => void;
  /** Carry no notebook. */
  detach: () => void;
  /** The path to send, read when a question is sent (null: no notebook). */
  pathNow: () => string | null;
}

/** Whether `widget` holds a thread's audit notebook (read from its metadata once loaded). */
function isAudit(widget: INotebookWidget): boolean {
  return isAuditNotebook(widget.context.model?.getMetadata(AUDIT_METADATA_KEY));
}

function openNotebooks(tracker: INotebookList | null): IOpenNotebook[] {
  return (tracker?.filter(w => !w.isDisposed && !isAudit(w)) ?? []).map(w => ({
    id: w.id,
    path: w.context.path,
    name: notebookName(w.context.path)
  }));
}

/** The notebook questions carry, among those `tracker` holds (none without a tracker). */
export function useAttachedNotebook(tracker: INotebookList | null): IAttachedNotebook {
  const [choice, setChoice] = React.useState<AttachChoice>(FOLLOW);
  // Bumped by every change of the open notebooks: they are read from the tracker at render.
  const [version, setVersion] = React.useState(0);
  const bump = React.useCallback(() => setVersion(v => v + 1), []);

  React.useEffect(() => {
    if (!tracker) {
      return;
    }
    tracker.currentChanged.connect(bump);
    tracker.widgetAdded.connect(bump);
    return () => {
      tracker.currentChanged.disconnect(bump);
      tracker.widgetAdded.disconnect(bump);
    };
  }, [tracker, bump]);

  const loaded = React.useRef(new WeakSet<INotebookWidget>());
  // Each open notebook's close and rename, connected again whenever the set changes.
  const widgets = React.useMemo(
    () => tracker?.filter(w => !w.isDisposed) ?? [],
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [tracker, version]
  );
  React.useEffect(() => {
    let live = true;
    for (const w of widgets) {
      w.disposed.connect(bump);
      w.context.pathChanged.connect(bump);
      // Its metadata (an audit notebook's, say) is known once the file is read: read again
      // then, once per notebook (this effect runs again on every change of the set).
      if (!loaded.current.has(w)) {
        void w.context.ready?.then(() => {
          loaded.current.add(w);
          if (live) {
            bump();
          }
        });
      }
    }
    return () => {
      live = false;
      for (const w of widgets) {
        w.disposed.disconnect(bump);
        w.context.pathChanged.disconnect(bump);
      }
    };
  }, [widgets, bump]);

  const open = openNotebooks(tracker);
  const now = choiceNow(choice, open);
  const front = tracker?.currentWidget;
  const attached = attachedOf(now, open, front && !front.isDisposed ? front.id : null);
  const latest = React.useRef(attached);
  latest.current = attached;

  return {
    open,
    choice: now,
    attached,
    choose: React.useCallback((id: string) => setChoice({ kind: 'chosen', id }), []),
    follow: React.useCallback(() => setChoice(FOLLOW), []),
    detach: React.useCallback(() => setChoice({ kind: 'detached' }), []),
    pathNow: React.useCallback(() => latest.current?.path ?? null, [])
  };
}
