import * as React from 'react';

/** The numbers of a turn's steps by call id (stepNames.ts), for the cards inside the turn. */
export const StepNumbersContext = React.createContext<ReadonlyMap<string, number>>(new Map());

/** The step numbers of the enclosing turn. */
export function useStepNumbers(): ReadonlyMap<string, number> {
  return React.useContext(StepNumbersContext);
}

/** One fact behind a card's details: its label and its value (left out when empty). */
export type DetailEntry = [label: string, value: string | null | undefined];

/**
 * What people seldom need on a card, closed until asked for: the ids and fingerprints the
 * CLI and the audit notebook name, the description of a dataset the server wrote.
 */
export function Details({ entries }: { entries: DetailEntry[] }): JSX.Element | null {
  const shown = entries.filter((e): e is [string, string] => !!e[1]);
  if (shown.length === 0) {
    return null;
  }
  return (
    <details className="jp-AnalystDetails">
      <summary>Details</summary>
      <dl>
        {shown.map(([label, value]) => (
          <React.Fragment key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </React.Fragment>
        ))}
      </dl>
    </details>
  );
}
