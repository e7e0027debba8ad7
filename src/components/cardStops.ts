/**
 * One tab stop per card of a conversation, not one per link, fold and button in it: a turn
 * with a query, a chart and an answer had eighteen, so reaching the prompt box or the next
 * turn by Tab meant walking through every "Details" on the way.
 *
 * The pattern is WAI-ARIA's roving tabindex for a composite (the Authoring Practices'
 * "Keyboard navigation inside components"), with the card as the composite:
 *
 * - a card (`[data-card]` not inside another card) is in the Tab order (tabindex 0);
 * - every control inside it (links, buttons, the summaries of its folds, a scrolling code
 *   block or table, which Chromium would otherwise make a tab stop of its own) is out of it
 *   (tabindex -1), and stays reachable:
 * - Enter, ArrowDown or ArrowRight on the card moves the focus to its first control;
 * - inside, ArrowDown/ArrowRight and ArrowUp/ArrowLeft move to the next and the previous
 *   control (round the card), Home and End to the first and the last; on a block that
 *   scrolls (a wide table, a long query), the arrows scroll it until its edge, then move on;
 * - Escape goes back to the card; Tab from anywhere in a card goes on to the next card,
 *   Shift+Tab back to the card.
 *
 * The "feed" pattern was not chosen: it keeps every control of an article in the Tab order
 * (its Page Up/Down only add a way between articles), which is what had to go.
 */

import * as React from 'react';

/** What a card is (each card component sets `data-card`). */
const CARD = '[data-card]';

/** What the browser would stop at by Tab inside a card. */
const FOCUSABLE = [
  'a[href]',
  'button',
  'input',
  'select',
  'textarea',
  'summary',
  'iframe',
  'audio[controls]',
  'video[controls]',
  '[contenteditable]',
  '[tabindex]'
].join(', ');

/** Blocks that may scroll (Chromium makes a scrolling block with no control in it a tab stop). */
const SCROLLERS = 'pre, .jp-AnalystPreview, .jp-AnalystCard-table';

/** The card (a tab stop) that holds `element`: its outermost card inside `container`, or null. */
export function cardOf(element: Element, container: HTMLElement): HTMLElement | null {
  let card: HTMLElement | null = null;
  for (
    let at = element.closest<HTMLElement>(CARD);
    at !== null && container.contains(at);
    at = at.parentElement?.closest<HTMLElement>(CARD) ?? null
  ) {
    card = at;
  }
  return card;
}

/** The cards of `container` that are tab stops: those not inside another card. */
export function cardsOf(container: HTMLElement): HTMLElement[] {
  return [...container.querySelectorAll<HTMLElement>(CARD)].filter(
    card => cardOf(card, container) === card
  );
}

/** Whether `element` is hidden by a closed fold between it and `card` (a fold's own summary shows). */
function folded(element: HTMLElement, card: HTMLElement): boolean {
  for (let at: HTMLElement | null = element; at && at !== card; at = at.parentElement) {
    const parent = at.parentElement;
    if (parent instanceof HTMLDetailsElement && !parent.open && at.tagName !== 'SUMMARY') {
      return true;
    }
  }
  return false;
}

/** Whether `element` is a block whose content overflows it (the arrows scroll it). */
function scrolls(element: HTMLElement): boolean {
  return (
    element.matches(SCROLLERS) &&
    (element.scrollHeight > element.clientHeight || element.scrollWidth > element.clientWidth)
  );
}

/** Whether `key` scrolls the block `element` further (it is not at that edge yet). */
function scrollsFurther(element: HTMLElement, key: string): boolean {
  if (!scrolls(element)) {
    return false;
  }
  switch (key) {
    case 'ArrowDown':
      return element.scrollTop + element.clientHeight < element.scrollHeight - 1;
    case 'ArrowUp':
      return element.scrollTop > 0;
    case 'ArrowRight':
      return element.scrollLeft + element.clientWidth < element.scrollWidth - 1;
    case 'ArrowLeft':
      return element.scrollLeft > 0;
    default:
      // Home and End scroll it to its start and its end.
      return key === 'Home' || key === 'End';
  }
}

/** The controls of `card` the arrows move among, in document order: shown, enabled. */
export function controlsOf(card: HTMLElement): HTMLElement[] {
  return [...card.querySelectorAll<HTMLElement>(`${FOCUSABLE}, ${SCROLLERS}`)].filter(
    element =>
      !(element as HTMLButtonElement).disabled &&
      !element.hidden &&
      !folded(element, card) &&
      (!element.matches(SCROLLERS) || element.matches(FOCUSABLE) || scrolls(element))
  );
}

/** Makes each card of `container` one tab stop and takes its controls out of the Tab order. */
export function applyCardStops(container: HTMLElement): void {
  for (const card of cardsOf(container)) {
    if (card.getAttribute('tabindex') !== '0') {
      card.setAttribute('tabindex', '0');
    }
    for (const control of card.querySelectorAll<HTMLElement>(`${FOCUSABLE}, ${SCROLLERS}`)) {
      if (control.getAttribute('tabindex') !== '-1') {
        control.setAttribute('tabindex', '-1');
      }
    }
  }
}

/** Whether a key press on `element` is the element's own (typing, choosing). */
function typing(element: HTMLElement): boolean {
  return element.matches('input, select, textarea, [contenteditable]');
}

/**
 * What a key does among the cards of `container` (see the module's comment); whether it
 * moved the focus (the key is then the cards' and goes no further).
 */
export function moveAmongCards(container: HTMLElement, target: HTMLElement, key: string): boolean {
  const card = cardOf(target, container);
  if (card === null || typing(target)) {
    return false;
  }
  const controls = controlsOf(card);
  let next: HTMLElement | undefined;
  if (target === card) {
    if (key === 'Enter' || key === 'ArrowDown' || key === 'ArrowRight') {
      next = controls[0];
    }
  } else if (key === 'Escape') {
    next = card;
  } else if (!scrollsFurther(target, key)) {
    const at = controls.indexOf(target);
    const count = controls.length;
    if (key === 'ArrowDown' || key === 'ArrowRight') {
      next = controls[(at + 1) % count];
    } else if (key === 'ArrowUp' || key === 'ArrowLeft') {
      next = controls[at <= 0 ? count - 1 : at - 1];
    } else if (key === 'Home') {
      next = controls[0];
    } else if (key === 'End') {
      next = controls[count - 1];
    }
  }
  if (next === undefined) {
    return false;
  }
  next.focus();
  return true;
}

/** What `useCardStops` gives the element that holds the cards. */
export interface ICardStops {
  ref: (element: HTMLElement | null) => void;
  onKeyDown: (event: React.KeyboardEvent<HTMLElement>) => void;
}

/**
 * The cards inside an element as one tab stop each, kept so as cards stream in and grow:
 * give the element `ref` and `onKeyDown`.
 */
export function useCardStops(): ICardStops {
  const container = React.useRef<HTMLElement | null>(null);
  const observer = React.useRef<MutationObserver | null>(null);
  const ref = React.useCallback((element: HTMLElement | null) => {
    observer.current?.disconnect();
    observer.current = null;
    container.current = element;
    if (element === null) {
      return;
    }
    applyCardStops(element);
    // Only the tree is watched (the tabindex set here is an attribute: no loop).
    observer.current = new MutationObserver(() => applyCardStops(element));
    observer.current.observe(element, { childList: true, subtree: true });
  }, []);
  const onKeyDown = React.useCallback((event: React.KeyboardEvent<HTMLElement>) => {
    const element = container.current;
    if (
      element === null ||
      event.altKey ||
      event.ctrlKey ||
      event.metaKey ||
      event.shiftKey ||
      !(event.target instanceof HTMLElement)
    ) {
      return;
    }
    if (moveAmongCards(element, event.target, event.key)) {
      event.preventDefault();
      event.stopPropagation();
    }
  }, []);
  return { ref, onKeyDown };
}
