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
 * - math is made inert once typeset: MathJax's `\href` and `\style` (whose "safe" mode
 *   keeps `cursor: url(...)`) write into the page after the sanitizer;
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
 * A typesetter whose output is made inert once written. It answers at once (not with a
 * promise), so the renderer's own pass over the links (which resets their `rel`) runs
 * before this one, not after.
 */
export class InertTypesetter implements IRenderMime.ILatexTypesetter {
  constructor(private readonly _base: IRenderMime.ILatexTypesetter) {}

  typeset(element: HTMLElement): void {
    const done = this._base.typeset(element);
    if (done instanceof Promise) {
      done
        .then(() => makeInert(element))
        .catch(reason => console.warn('jupyter-analyst: math could not be typeset', reason));
    } else {
      makeInert(element);
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
