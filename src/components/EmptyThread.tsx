import * as React from 'react';

import type { AnalystClient, ITablesReply } from '../transport/api';

export interface IEmptyThreadProps {
  client: AnalystClient;
  threadId: string;
  /** A suggested question was picked: it goes into the prompt box, not straight to the model. */
  onPick: (question: string) => void;
}

/**
 * A row count as people read it: `1,200 rows`, `1 row`; an engine's estimate (a table too
 * large to count) as `about 50,000,000 rows`.
 */
export function rowCount(rows: number, estimated = false): string {
  return `${estimated ? 'about ' : ''}${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}`;
}

/**
 * What a thread with no turn yet offers: the tables of its source (as the model is told of
 * them, with their row counts when they were read in time) and questions to start from,
 * each of which fills the prompt box. While they load, or if they cannot be read, the
 * thread says only how to start.
 */
export function EmptyThread({ client, threadId, onPick }: IEmptyThreadProps): JSX.Element {
  const [offer, setOffer] = React.useState<ITablesReply | null>(null);
  const [failed, setFailed] = React.useState(false);

  React.useEffect(() => {
    let live = true;
    setOffer(null);
    setFailed(false);
    client.tables(threadId).then(
      reply => live && setOffer(reply),
      // The source did not open: a turn says why, with its fix, when one is asked.
      () => live && setFailed(true)
    );
    return () => {
      live = false;
    };
  }, [client, threadId]);

  return (
    <div className="jp-AnalystEmpty" aria-busy={offer === null && !failed}>
      <p className="jp-AnalystTurns-empty">Ask a question about the data to start.</p>
      {offer && offer.tables.length > 0 && (
        <section className="jp-AnalystEmpty-tables" aria-label="Tables">
          <h3 className="jp-AnalystEmpty-heading">
            Tables{offer.source ? ` in ${offer.source}` : ''}
          </h3>
          <ul>
            {offer.tables.map(t => (
              <li key={t.name} className="jp-AnalystEmpty-table">
                <code>{t.name}</code>
                {t.rows !== null && (
                  <span className="jp-AnalystEmpty-rows">
                    {rowCount(t.rows, t.rows_estimated === true)}
                  </span>
                )}
              </li>
            ))}
          </ul>
          {offer.more > 0 && (
            <p className="jp-AnalystEmpty-more">and {offer.more} more the model can look up</p>
          )}
        </section>
      )}
      {offer && offer.suggestions.length > 0 && (
        <section className="jp-AnalystEmpty-suggestions" aria-label="Questions to start with">
          <h3 className="jp-AnalystEmpty-heading">Try</h3>
          {offer.suggestions.map(q => (
            <button
              key={q}
              type="button"
              className="jp-AnalystEmpty-suggestion"
              title="Put this question in the prompt box"
              onClick={() => onPick(q)}
            >
              {q}
            </button>
          ))}
        </section>
      )}
    </div>
  );
}
