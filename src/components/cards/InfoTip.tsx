import * as React from 'react';

export interface IInfoTipProps {
  /** What the explanation is about, said by a screen reader ("Size of the prompt"). */
  label: string;
  /** The explanation; its line breaks are kept. */
  text: string;
}

/**
 * A small ⓘ that explains something on hover and on keyboard focus, and to a screen reader
 * through `aria-describedby`: the explanation belongs to the icon, so pointing anywhere else
 * on a card pops nothing up (a `title` over the whole card did, over every table and chart).
 * Escape hides it while the pointer stays on the icon (WCAG's "dismissible"). Inside a card's
 * folding header, a click on it neither folds nor unfolds the card.
 */
export function InfoTip({ label, text }: IInfoTipProps): JSX.Element {
  const id = `jp-AnalystInfo-${React.useId().replace(/:/g, '')}`;
  const [hovered, setHovered] = React.useState(false);
  const [dismissed, setDismissed] = React.useState(false);
  React.useEffect(() => {
    if (!hovered) {
      return;
    }
    // The focus may be anywhere (the prompt box) while the pointer rests on the icon.
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') {
        setDismissed(true);
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => document.removeEventListener('keydown', onKey, true);
  }, [hovered]);
  return (
    <span
      className={`jp-AnalystInfo ${dismissed ? 'jp-mod-dismissed' : ''}`.trim()}
      onMouseEnter={() => setHovered(true)}
      onMouseLeave={() => {
        setHovered(false);
        setDismissed(false);
      }}
    >
      <button
        type="button"
        className="jp-AnalystInfo-icon"
        aria-label={label}
        aria-describedby={id}
        onFocus={() => setDismissed(false)}
        onClick={event => event.preventDefault()}
      >
        ⓘ
      </button>
      <span className="jp-AnalystInfo-text" role="tooltip" id={id}>
        {text}
      </span>
    </span>
  );
}
