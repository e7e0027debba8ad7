import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import type { IMimeBundle } from '../transport/api';
import { useAnalyst } from '../context';

export interface IMimeOutputProps {
  bundle: IMimeBundle;
  className?: string;
  /**
   * Called with the node that shows the bundle each time a render of it has finished (the
   * rendered markdown, or its text when no renderer could): what marks up the rendered
   * output (an answer's receipts) does it here, after the renderer wrote it.
   */
  onRendered?: (node: HTMLElement) => void;
}

/**
 * What the panel's typesetter sends a rendered node once its math is in place
 * (`TYPESET_EVENT` of src/untrusted, which components do not import): the node's content
 * was replaced, so what marked it up marks it again.
 */
export const TYPESET_EVENT = 'jp-analyst-typeset';

/** Renders tried again after a failure, and the wait before the first retry. */
const RETRIES = 5;
const RETRY_MS = 1000;

/** The text of a bundle, for when no renderer is at hand (outside JupyterLab). */
function plainText(bundle: IMimeBundle): string {
  for (const type of ['text/markdown', 'text/plain']) {
    const value = bundle.data[type];
    if (typeof value === 'string') {
      return value;
    }
  }
  return '';
}

/**
 * The bundle as a renderer reads it. Model text and data cells are not the user's:
 * untrusted, so renderers sanitize them and the panel's registry makes them inert (nothing
 * loads from elsewhere: src/untrusted). (A plain object, so this module loads without
 * rendermime's implementation, e.g. in unit tests.)
 */
function mimeModel(bundle: IMimeBundle): IRenderMime.IMimeModel {
  return {
    trusted: false,
    data: bundle.data as IRenderMime.IMimeModel['data'],
    metadata: (bundle.metadata ?? {}) as IRenderMime.IMimeModel['metadata'],
    setData: () => undefined
  };
}

/**
 * Keeps one renderer on a host node and renders each new bundle into it, one render at
 * a time and always the latest (a stream may change the bundle faster than markdown
 * renders). While a render runs, the host keeps its height: no layout jump.
 */
class RenderSlot {
  private _renderer: IRenderMime.IRenderer | null = null;
  private _mimeType = '';
  private _busy = false;
  private _next: IMimeBundle | null = null;

  constructor(
    private readonly _host: HTMLElement,
    private readonly _rendermime: IRenderMimeRegistry,
    private readonly _rendered: (node: HTMLElement) => void
  ) {}

  show(bundle: IMimeBundle): void {
    this._next = bundle;
    if (!this._busy) {
      void this._drain();
    }
  }

  /**
   * The renderer disposed. React removes a component's nodes before its effects' clean-up
   * runs: the host has then left the page with the renderer's node in it, and Lumino
   * refuses to detach a widget whose node is not in the page (it throws, and the throw
   * would take the whole panel down). Such a widget is marked detached, then disposed.
   */
  dispose(): void {
    this._next = null;
    const renderer = this._renderer;
    this._renderer = null;
    if (renderer === null) {
      return;
    }
    if (renderer.isAttached && !renderer.node.isConnected) {
      renderer.processMessage(Widget.Msg.BeforeDetach);
      renderer.clearFlag(Widget.Flag.IsAttached);
      renderer.processMessage(Widget.Msg.AfterDetach);
    }
    renderer.dispose();
  }

  private _retries = 0;

  private _retry(bundle: IMimeBundle): void {
    if (this._retries >= RETRIES) {
      return;
    }
    this._retries += 1;
    setTimeout(() => {
      if (this._renderer !== null && this._next === null) {
        this.show(bundle);
      }
    }, RETRY_MS * this._retries);
  }

  private async _drain(): Promise<void> {
    this._busy = true;
    while (this._next !== null) {
      const bundle = this._next;
      this._next = null;
      const mimeType = this._rendermime.preferredMimeType(
        bundle.data as IRenderMime.IMimeModel['data'],
        'any'
      );
      if (!mimeType) {
        continue;
      }
      if (this._renderer === null || mimeType !== this._mimeType) {
        this._renderer?.dispose();
        this._renderer = this._rendermime.createRenderer(mimeType);
        this._mimeType = mimeType;
        const made = this._renderer;
        made.node.addEventListener(TYPESET_EVENT, () => {
          // A render still running reports its node when it ends.
          if (this._renderer === made && !this._busy) {
            this._rendered(made.node);
          }
        });
        Widget.attach(this._renderer, this._host);
      }
      const renderer = this._renderer;
      this._host.style.minHeight = `${this._host.offsetHeight}px`;
      try {
        renderer.node.classList.remove('jp-AnalystOutput-plain');
        await renderer.renderModel(mimeModel(bundle));
      } catch (error) {
        // A renderer's code is loaded on first use: a network cut then fails it. The
        // text is shown as it is meanwhile, and the render tried again.
        console.warn('jupyter-analyst: an output could not be rendered', error);
        renderer.node.textContent = plainText(bundle);
        renderer.node.classList.add('jp-AnalystOutput-plain');
        this._retry(bundle);
      } finally {
        this._host.style.minHeight = '';
      }
      if (this._renderer !== renderer) {
        break; // disposed meanwhile
      }
      if (this._next === null) {
        this._rendered(renderer.node);
      }
    }
    this._busy = false;
  }
}

/** A MIME bundle rendered as a notebook output renders it (JupyterLab's rendermime). */
export function MimeOutput({ bundle, className, onRendered }: IMimeOutputProps): JSX.Element {
  const { rendermime } = useAnalyst();
  const host = React.useRef<HTMLDivElement>(null);
  const plain = React.useRef<HTMLPreElement>(null);
  const slot = React.useRef<RenderSlot | null>(null);
  // The latest callback, read when a render ends (a slot outlives the props it was made with).
  const rendered = React.useRef(onRendered);
  rendered.current = onRendered;

  // A layout effect: its cleanup runs before React takes the host out of the page.
  React.useLayoutEffect(() => {
    if (rendermime === null || host.current === null) {
      return;
    }
    const made = new RenderSlot(host.current, rendermime, node => rendered.current?.(node));
    slot.current = made;
    return () => {
      made.dispose();
      slot.current = null;
    };
  }, [rendermime]);

  React.useEffect(() => {
    slot.current?.show(bundle);
    if (rendermime === null && plain.current !== null) {
      rendered.current?.(plain.current);
    }
  }, [bundle, rendermime]);

  const classes = `jp-AnalystOutput ${className ?? ''}`.trim();
  if (rendermime === null) {
    return (
      <div className={classes}>
        <pre ref={plain}>{plainText(bundle)}</pre>
      </div>
    );
  }
  return <div className={classes} ref={host} />;
}
