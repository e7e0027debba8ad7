/**
 * Whether a scrolled block (a table, printed text) is wider than the card it is in, and how
 * much of it is out of sight on the right: the card then says so ("2 more columns →"), since a
 * sideways scrollbar is easy to miss and the cut falls between columns or within a line.
 */

import * as React from 'react';

/** A scroll container's widths, as the page lays it out (pixels). */
export interface IScrollBox {
  scrollWidth: number;
  clientWidth: number;
  scrollLeft: number;
}

/** What is out of sight: nothing, or how many columns (of a table) lie past the right edge. */
export interface IWideContent {
  /** Something lies past the right edge. */
  more: boolean;
  /** Columns not wholly in sight on the right (0 for text). */
  columns: number;
}

export const NOT_WIDE: IWideContent = { more: false, columns: 0 };

/**
 * What lies past the right edge of `box`: `columnRights` are the right edges of a table's
 * columns, measured from the start of the scrolled content (none for text). A pixel of slack
 * absorbs rounding.
 *
 * ```ts
 * wideContent({ scrollWidth: 600, clientWidth: 250, scrollLeft: 0 }, [100, 200, 400, 600])
 * // { more: true, columns: 2 }
 * ```
 */
export function wideContent(box: IScrollBox, columnRights: readonly number[] = []): IWideContent {
  const edge = box.scrollLeft + box.clientWidth;
  if (box.scrollWidth - edge <= 1) {
    return NOT_WIDE;
  }
  return { more: true, columns: columnRights.filter(right => right > edge + 1).length };
}

/** The cue a card shows under a wide block. */
export function wideCue(wide: IWideContent): string {
  if (!wide.more) {
    return '';
  }
  if (wide.columns > 0) {
    return `${wide.columns} more column${wide.columns === 1 ? '' : 's'} → scroll sideways`;
  }
  return 'Wider than the card → scroll sideways';
}

/**
 * What of the block at `ref` (or, with `inner`, of the element of it that selector finds, such
 * as the `pre` a renderer draws later) is out of sight on the right, measured again as it
 * scrolls, resizes (the sidebar dragged wider) or its content changes (`content`). A table's
 * columns are its header's cells (`thead th`).
 */
export function useWideContent(
  ref: React.RefObject<HTMLElement>,
  content: unknown,
  inner?: string
): IWideContent {
  const [wide, setWide] = React.useState<IWideContent>(NOT_WIDE);
  React.useEffect(() => {
    const root = ref.current;
    if (root === null) {
      return;
    }
    const measure = (): void => {
      const node = inner ? root.querySelector<HTMLElement>(inner) : root;
      let next = NOT_WIDE;
      if (node !== null) {
        const start = node.getBoundingClientRect().left - node.scrollLeft;
        const rights = Array.from(node.querySelectorAll('thead th')).map(
          th => th.getBoundingClientRect().right - start
        );
        next = wideContent(node, rights);
      }
      setWide(now => (now.more === next.more && now.columns === next.columns ? now : next));
    };
    measure();
    // Scrolling does not bubble: caught on the way down, whichever element of it scrolls.
    root.addEventListener('scroll', measure, { capture: true, passive: true });
    // Absent in some test environments: then measured on scroll and content changes only.
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(measure);
    observer?.observe(root);
    if (root.firstElementChild) {
      observer?.observe(root.firstElementChild);
    }
    return () => {
      root.removeEventListener('scroll', measure, { capture: true });
      observer?.disconnect();
    };
  }, [ref, content, inner]);
  return wide;
}
