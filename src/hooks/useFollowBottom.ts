import * as React from 'react';

/** How close to the bottom (px) still counts as reading the latest. */
const NEAR = 48;

/**
 * A scrolling container that follows new content while the reader is at its bottom,
 * and stays put when they scrolled up to read something earlier.
 */
export function useFollowBottom<T extends HTMLElement>(content: unknown): React.RefObject<T> {
  const ref = React.useRef<T>(null);
  const atBottom = React.useRef(true);

  React.useEffect(() => {
    const node = ref.current;
    if (node === null) {
      return;
    }
    let lastTop = node.scrollTop;
    const onScroll = (): void => {
      // Only the reader scrolls up: content that grew after our own scroll to the
      // bottom (an image loading) does not mean they left it.
      const top = node.scrollTop;
      if (node.scrollHeight - top - node.clientHeight < NEAR) {
        atBottom.current = true;
      } else if (top < lastTop) {
        atBottom.current = false;
      }
      lastTop = top;
    };
    node.addEventListener('scroll', onScroll, { passive: true });
    // Outputs render after React's commit (markdown, images): follow those too.
    const observer =
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver(() => {
            if (atBottom.current) {
              node.scrollTop = node.scrollHeight;
            }
          });
    if (observer !== null && node.firstElementChild !== null) {
      observer.observe(node.firstElementChild);
    }
    return () => {
      node.removeEventListener('scroll', onScroll);
      observer?.disconnect();
    };
  }, []);

  React.useLayoutEffect(() => {
    const node = ref.current;
    if (node !== null && atBottom.current) {
      node.scrollTop = node.scrollHeight;
    }
  }, [content]);

  return ref;
}
