import * as React from 'react';

/** A cell of an artifact's table a receipt points at (`row` from 0; either may be unknown). */
export interface ICitedCell {
  artifactId: string;
  row: number | null;
  column: string | null;
}

/** What the last receipt followed points at: its steps' cards and their cells. */
export interface ICitedFocus {
  /** The steps, by call id; the card of the first is brought into view. */
  callIds: string[];
  cells: ICitedCell[];
  /** New for each follow, so following the same receipt again shows it again. */
  nonce: number;
}

interface ICitedFocusContext {
  focus: ICitedFocus | null;
  show: (target: Omit<ICitedFocus, 'nonce'>) => void;
}

const CitedFocusContext = React.createContext<ICitedFocusContext>({
  focus: null,
  show: () => undefined
});

/**
 * Holds what the answer's receipts point at for the cards of a conversation: a receipt
 * followed in an answer marks its step's card and the cell of its table, wherever in the
 * thread that card is.
 */
export function CitedFocusProvider({ children }: { children: React.ReactNode }): JSX.Element {
  const [focus, setFocus] = React.useState<ICitedFocus | null>(null);
  const show = React.useCallback(
    (target: Omit<ICitedFocus, 'nonce'>) =>
      setFocus(now => ({ ...target, nonce: (now?.nonce ?? 0) + 1 })),
    []
  );
  const value = React.useMemo(() => ({ focus, show }), [focus, show]);
  return <CitedFocusContext.Provider value={value}>{children}</CitedFocusContext.Provider>;
}

/** What the receipts point at, and how an answer points. */
export function useCitedFocus(): ICitedFocusContext {
  return React.useContext(CitedFocusContext);
}

/** The cells of artifact `artifactId` the followed receipt points at. */
export function useCitedCells(artifactId: string): ICitedCell[] {
  const { focus } = useCitedFocus();
  return React.useMemo(
    () => focus?.cells.filter(cell => cell.artifactId === artifactId) ?? [],
    [focus, artifactId]
  );
}

/**
 * Brings a step's card into view for a followed receipt: unfolded (a reused step comes
 * folded), the cited cell of its table in view if the table shows it, else the card; the
 * focus on the card, where the keyboard goes on from.
 */
export function revealCard(card: HTMLElement): void {
  const fold = card.querySelector('details.jp-AnalystCard-fold');
  if (fold instanceof HTMLDetailsElement) {
    fold.open = true;
  }
  const target =
    card.querySelector<HTMLElement>('td.jp-mod-cited') ??
    card.querySelector<HTMLElement>('tr.jp-mod-citedRow') ??
    card;
  if (typeof target.scrollIntoView === 'function') {
    target.scrollIntoView({ block: 'center', inline: 'nearest' });
  }
  card.focus({ preventScroll: true });
}
