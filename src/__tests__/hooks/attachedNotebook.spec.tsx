/**
 * Which notebook a question carries: the one in front, followed as the user moves between
 * notebooks, until the user chooses one or detaches; a chosen notebook closed gives way to
 * following again; a rename is followed. The hook runs over JupyterLab's own WidgetTracker
 * (what an INotebookTracker is) and real Lumino widgets.
 */

// The tracker's module alone: the package's index pulls in a clipboard jsdom lacks.
import { WidgetTracker } from '@jupyterlab/apputils/lib/widgettracker';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import * as React from 'react';
import { act } from 'react';

import {
  attachedOf,
  choiceNow,
  FOLLOW,
  IOpenNotebook,
  isAuditNotebook,
  notebookName
} from '../../hooks/notebookAttachment';
import { IAttachedNotebook, useAttachedNotebook } from '../../hooks/useAttachedNotebook';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

const A: IOpenNotebook = { id: 'a', path: 'work/a.ipynb', name: 'a.ipynb' };
const B: IOpenNotebook = { id: 'b', path: 'b.ipynb', name: 'b.ipynb' };

describe('attachedOf', () => {
  it('follows the notebook in front', () => {
    expect(attachedOf(FOLLOW, [A, B], 'a')).toBe(A);
    expect(attachedOf(FOLLOW, [A, B], 'b')).toBe(B);
    expect(attachedOf(FOLLOW, [], null)).toBeNull();
  });

  it('keeps a chosen notebook whichever is in front', () => {
    expect(attachedOf({ kind: 'chosen', id: 'a' }, [A, B], 'b')).toBe(A);
  });

  it('carries none when detached, even with notebooks open', () => {
    expect(attachedOf({ kind: 'detached' }, [A, B], 'a')).toBeNull();
  });

  it('follows the front again once the chosen notebook is closed', () => {
    expect(choiceNow({ kind: 'chosen', id: 'a' }, [B])).toEqual(FOLLOW);
    expect(attachedOf({ kind: 'chosen', id: 'a' }, [B], 'b')).toBe(B);
    expect(choiceNow({ kind: 'detached' }, [])).toEqual({ kind: 'detached' });
  });

  it("knows a thread's audit notebook by the metadata the export writes", () => {
    expect(isAuditNotebook({ format: 2, thread_id: 't-1', manifest: [] })).toBe(true);
    expect(isAuditNotebook(undefined)).toBe(false);
    expect(isAuditNotebook(null)).toBe(false);
    expect(isAuditNotebook(['t-1'])).toBe(false);
    // A step cell's provenance, or a notebook that only names a thread, is not one.
    expect(isAuditNotebook({ tool: 'run_sql', call_id: 'c-1' })).toBe(false);
    expect(isAuditNotebook({ thread_id: 't-1' })).toBe(false);
  });

  it('names a notebook by its file name', () => {
    expect(notebookName('work/q3/analysis.ipynb')).toBe('analysis.ipynb');
    expect(notebookName('top.ipynb')).toBe('top.ipynb');
  });
});

/** A notebook panel as the hook reads it: a real widget with a document context's path. */
class NotebookWidget extends Widget {
  readonly context: {
    path: string;
    pathChanged: Signal<unknown, string>;
    ready: Promise<void>;
    model: { getMetadata(key: string): unknown } | null;
  };
  /** Reads the file: its metadata is known from then on. */
  load: (metadata: Record<string, unknown>) => void = () => undefined;

  constructor(id: string, path: string) {
    super();
    this.id = id;
    this.node.tabIndex = -1;
    const ready = new Promise<void>(resolve => {
      this.load = metadata => {
        this.context.model = { getMetadata: key => metadata[key] };
        resolve();
      };
    });
    this.context = { path, pathChanged: new Signal<unknown, string>(this), ready, model: null };
  }

  rename(path: string): void {
    this.context.path = path;
    this.context.pathChanged.emit(path);
  }
}

describe('useAttachedNotebook', () => {
  let tracker: WidgetTracker<NotebookWidget>;
  let latest: IAttachedNotebook;

  function Probe({ list }: { list: WidgetTracker<NotebookWidget> | null }): null {
    latest = useAttachedNotebook(list);
    return null;
  }

  async function open(id: string, path: string): Promise<NotebookWidget> {
    const widget = new NotebookWidget(id, path);
    Widget.attach(widget, document.body);
    await act(async () => {
      await tracker.add(widget);
    });
    return widget;
  }

  function bringToFront(widget: NotebookWidget): void {
    act(() => widget.node.focus());
  }

  beforeEach(() => {
    tracker = new WidgetTracker<NotebookWidget>({ namespace: 'probe' });
    act(() => mounted.root().render(<Probe list={tracker} />));
  });

  afterEach(() => {
    tracker.dispose();
  });

  it('carries nothing while no notebook is open, and nothing without a tracker', () => {
    expect(latest.open).toEqual([]);
    expect(latest.attached).toBeNull();
    expect(latest.pathNow()).toBeNull();
    act(() => mounted.root().render(<Probe list={null} />));
    expect(latest.attached).toBeNull();
  });

  it('follows the notebook in front until the user chooses one', async () => {
    const a = await open('nb-a', 'work/a.ipynb');
    const b = await open('nb-b', 'b.ipynb');
    bringToFront(a);
    expect(latest.open.map(n => n.name)).toEqual(['a.ipynb', 'b.ipynb']);
    expect(latest.pathNow()).toBe('work/a.ipynb');
    bringToFront(b);
    expect(latest.attached?.path).toBe('b.ipynb');
    expect(latest.choice).toEqual(FOLLOW);

    act(() => latest.choose('nb-a'));
    bringToFront(b);
    expect(latest.choice).toEqual({ kind: 'chosen', id: 'nb-a' });
    expect(latest.pathNow()).toBe('work/a.ipynb');

    act(() => latest.follow());
    expect(latest.pathNow()).toBe('b.ipynb');
  });

  it('sends no notebook once detached, until the user attaches one again', async () => {
    const a = await open('nb-a', 'a.ipynb');
    bringToFront(a);
    act(() => latest.detach());
    expect(latest.attached).toBeNull();
    expect(latest.pathNow()).toBeNull();
    // Another notebook in front does not undo the user's detach.
    const b = await open('nb-b', 'b.ipynb');
    bringToFront(b);
    expect(latest.pathNow()).toBeNull();
    expect(latest.choice).toEqual({ kind: 'detached' });
    act(() => latest.choose('nb-b'));
    expect(latest.pathNow()).toBe('b.ipynb');
  });

  it("never carries a thread's audit notebook, whatever its name, once its file is read", async () => {
    const mine = await open('nb-mine', 'mine.ipynb');
    const audit = await open('nb-audit', 'analysis.ipynb');
    await act(async () => {
      mine.load({});
      audit.load({ jupyter_analyst: { format: 2, thread_id: 't-1', manifest: [] } });
      await audit.context.ready;
    });
    bringToFront(audit);
    expect(latest.open.map(n => n.name)).toEqual(['mine.ipynb']);
    expect(latest.attached).toBeNull();
    expect(latest.pathNow()).toBeNull();
    bringToFront(mine);
    expect(latest.pathNow()).toBe('mine.ipynb');
  });

  it('follows a rename, and the front again when the chosen notebook closes', async () => {
    const a = await open('nb-a', 'Untitled.ipynb');
    const b = await open('nb-b', 'b.ipynb');
    act(() => latest.choose('nb-a'));
    act(() => a.rename('sales.ipynb'));
    expect(latest.attached).toEqual({ id: 'nb-a', path: 'sales.ipynb', name: 'sales.ipynb' });

    bringToFront(b);
    act(() => a.dispose());
    expect(latest.open.map(n => n.id)).toEqual(['nb-b']);
    expect(latest.choice).toEqual(FOLLOW);
    expect(latest.pathNow()).toBe('b.ipynb');

    act(() => b.dispose());
    expect(latest.open).toEqual([]);
    expect(latest.pathNow()).toBeNull();
  });
});
