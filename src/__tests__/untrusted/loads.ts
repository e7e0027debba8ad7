/**
 * What a piece of HTML would make the browser fetch on its own once set into the page, or
 * do on a click that it should not: the oracle of the specs of src/untrusted. It is
 * written apart from the transform (what the HTML standard fetches, listed again), so
 * that a gap in one is not hidden by the same gap in the other.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const FETCHING_ELEMENTS = [
  'script',
  'style',
  'link',
  'meta',
  'base',
  'iframe',
  'frame',
  'object',
  'embed',
  'template',
  'noscript'
];
const FETCHING_ATTRIBUTES = [
  'src',
  'srcset',
  'imagesrcset',
  'poster',
  'background',
  'lowsrc',
  'data',
  'action',
  'formaction',
  'ping',
  'attributionsrc',
  'longdesc'
];
const SVG_ANIMATIONS = ['animate', 'set', 'animatemotion', 'animatetransform'];

/** Each thing `html`, set as a div's inner HTML, would fetch or run (empty when inert). */
export function loads(html: string): string[] {
  const host = document.implementation.createHTMLDocument('').createElement('div');
  host.innerHTML = html;
  const found: string[] = [];
  for (const element of Array.from(host.querySelectorAll('*'))) {
    const name = element.localName.toLowerCase();
    const svg = element.namespaceURI === SVG_NS;
    if (
      FETCHING_ELEMENTS.includes(name) ||
      (svg && SVG_ANIMATIONS.includes(name)) ||
      name === 'form'
    ) {
      found.push(`<${name}>`);
    }
    for (const { localName, value } of Array.from(element.attributes)) {
      const attribute = localName.toLowerCase();
      if (attribute.startsWith('on') || attribute.startsWith('data-commandlinker')) {
        found.push(`${name}[${attribute}]`);
      } else if (FETCHING_ATTRIBUTES.includes(attribute)) {
        if (!(name === 'img' && attribute === 'src' && /^data:image\//i.test(value))) {
          found.push(`${name}[${attribute}=${value}]`);
        }
      } else if (attribute === 'href') {
        const link = name === 'a' || name === 'area';
        const fine =
          value.startsWith('#') ||
          (link && /^(https?|mailto):/i.test(value)) ||
          (svg && name === 'image' && /^data:image\//i.test(value));
        if (!fine) {
          found.push(`${name}[href=${value}]`);
        }
      } else if (/url\s*\(|image-set|\\/i.test(value) && !/url\(#/.test(value)) {
        found.push(`${name}[${attribute}=${value}]`);
      }
    }
  }
  return found;
}
