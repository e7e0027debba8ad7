/**
 * The rendermime the panel renders the model's content with: JupyterLab's renderers, its
 * sanitizer, markdown parser and math, with what each leaves made inert (./html.ts).
 *
 * Every bundle the panel shows (an answer's markdown, a step's code, an artifact's
 * preview) is the model's, rendered untrusted; one registry serves them all, so no place
 * can forget the transform:
 *
 * - its sanitizer runs JupyterLab's, then {@link inertHtml}, before rendermime sets the
 *   HTML into the page (the only moment at which a remote image can be stopped);
 * - each renderer, once it has rendered, makes its node inert again: JupyterLab adds links
 *   after the sanitizer (URLs found in text, any scheme) and sets their `rel` to
 *   `noopener` alone;
 * - math is typeset in a copy of its element, away from the page, and the copy's content
 *   made inert before it replaces the element's: MathJax's `\href` and `\style` (whose
 *   "safe" mode keeps `cursor: url(...)`) write after the sanitizer, and a cursor's image
 *   loads as soon as the page computes its style (another typesetting measuring the page
 *   does), so nothing it writes may reach the page before the inert pass;
 * - it has no URL resolver and no link handler: nothing the model wrote is resolved
 *   against the Jupyter server's files or opened in JupyterLab.
 */

import { IRenderMimeRegistry, RenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { inertHtml, makeInert } from './html';

/** JupyterLab's sanitizer, then the model's HTML made inert. */
export class InertSanitizer implements IRenderMime.ISanitizer {
  constructor(private readonly _base: IRenderMime.ISanitizer) {}

  sanitize(dirty: string, options?: IRenderMime.ISanitizerOptions): string {
    return inertHtml(this._base.sanitize(dirty, options));
  }

  getAutolink(): boolean {
    return this._base.getAutolink?.() ?? true;
  }

  get allowNamedProperties(): boolean {
    return this._base.allowNamedProperties ?? false;
  }

  /** A command linker runs a JupyterLab command on a click: never from the model. */
  readonly allowCommandLinker = false;
}

/**
 * What an element whose math was typeset is sent once its typeset content is in place
 * (what marks up a rendered output marks it again: the content was replaced).
 */
export const TYPESET_EVENT = 'jp-analyst-typeset';

/**
 * A typesetter whose output reaches the page only once inert, whatever runs meanwhile or
 * in whichever order: the base typesets a detached copy of the element (nothing loads from
 * a node out of the page), the copy is made inert, then its content replaces the
 * element's. A newer typesetting of the same element (a render replaced its content)
 * supersedes one still running, whose copy is then dropped. A copy in which nothing was
 * typeset is dropped too: the element keeps its own nodes (and what marks them up).
 */
export class InertTypesetter implements IRenderMime.ILatexTypesetter {
  private readonly _latest = new WeakMap<HTMLElement, HTMLElement>();

  constructor(private readonly _base: IRenderMime.ILatexTypesetter) {}

  typeset(element: HTMLElement): void {
    const copy = element.cloneNode(true) as HTMLElement;
    makeInert(copy);
    // What the copy is with no math typeset: most renders have none, and keep their nodes.
    const untypeset = copy.innerHTML;
    this._latest.set(element, copy);
    const settle = (): void => {
      if (this._latest.get(element) !== copy) {
        return;
      }
      this._latest.delete(element);
      makeInert(copy);
      if (copy.innerHTML === untypeset) {
        return;
      }
      element.replaceChildren(...Array.from(copy.childNodes));
      element.dispatchEvent(new CustomEvent(TYPESET_EVENT));
    };
    const failed = (reason: unknown): void => {
      // The element keeps its untypeset content, which the sanitizer made inert.
      if (this._latest.get(element) === copy) {
        this._latest.delete(element);
      }
      console.warn('jupyter-analyst: math could not be typeset', reason);
    };
    let done: void | Promise<void>;
    try {
      done = this._base.typeset(copy);
    } catch (reason) {
      failed(reason);
      return;
    }
    if (done instanceof Promise) {
      done.then(settle, failed);
    } else {
      settle();
    }
  }
}

/** A renderer whose node is made inert after each render. */
function inertRenderer(renderer: IRenderMime.IRenderer): IRenderMime.IRenderer {
  const render = renderer.renderModel.bind(renderer);
  renderer.renderModel = async (model: IRenderMime.IMimeModel): Promise<void> => {
    await render(model);
    makeInert(renderer.node);
  };
  return renderer;
}

/**
 * A registry with `base`'s renderers (each MIME type at its rank) that renders untrusted
 * content inert. Give it bundles as untrusted (`trusted: false`): a trusted one skips the
 * sanitizer, hence the transform before the HTML reaches the page.
 */
export function untrustedRendermime(base: IRenderMimeRegistry): IRenderMimeRegistry {
  const registry = new RenderMimeRegistry({
    sanitizer: new InertSanitizer(base.sanitizer),
    latexTypesetter: base.latexTypesetter ? new InertTypesetter(base.latexTypesetter) : undefined,
    markdownParser: base.markdownParser ?? undefined,
    translator: base instanceof RenderMimeRegistry ? base.translator : undefined
  });
  // In rank order, so that ties keep their order.
  for (const mimeType of base.mimeTypes) {
    const factory = base.getFactory(mimeType);
    if (factory === undefined) {
      continue;
    }
    registry.addFactory(
      {
        safe: factory.safe,
        defaultRank: factory.defaultRank,
        mimeTypes: [mimeType],
        createRenderer: options => inertRenderer(factory.createRenderer(options))
      },
      base.getRank(mimeType)
    );
  }
  return registry;
}
