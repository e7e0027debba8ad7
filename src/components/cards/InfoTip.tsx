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
 * Inside a card's folding header, a click on it neither folds nor unfolds the card.
 */
export function InfoTip({ label, text }: IInfoTipProps): JSX.Element {
  const id = `jp-AnalystInfo-${React.useId().replace(/:/g, '')}`;
  return (
    <span className="jp-AnalystInfo">
      <button
        type="button"
        className="jp-AnalystInfo-icon"
        aria-label={label}
        aria-describedby={id}
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
