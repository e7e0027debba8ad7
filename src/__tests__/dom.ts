/**
 * A React root mounted in the page for each test of a spec, and removed after it
 * (React 18's act() outside a testing library).
 */

import { act } from 'react';
import { createRoot, Root } from 'react-dom/client';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** The current test's host element and root (call once at a spec's top level). */
export function mountedRoot(): { host: () => HTMLElement; root: () => Root } {
  let host: HTMLElement;
  let root: Root;
  beforeEach(() => {
    host = document.createElement('div');
    document.body.appendChild(host);
    root = createRoot(host);
  });
  afterEach(() => {
    act(() => root.unmount());
    host.remove();
  });
  return { host: () => host, root: () => root };
}
