import * as React from 'react';

import type { JsonValue } from '../../model/events';
import type { IMimeBundle } from '../../transport/api';
import { useWideContent } from '../../hooks/useWideContent';
import { WideCue } from '../WideBlock';
import { formatTable } from './tableFormat';

/** A dataset's preview as the server's metadata gives it: columns and rows as JSON values. */
export interface ITablePreview {
  columns: { name: string; type: string }[];
  sample: Record<string, JsonValue>[];
  /** Rows in the whole dataset. */
  rows: number;
}

function isRecord(value: unknown): value is Record<string, JsonValue> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The table a preview bundle carries in its metadata (null for an image, a text, an older server). */
export function tablePreviewOf(bundle: IMimeBundle): ITablePreview | null {
  const meta = bundle.metadata ?? {};
  const { columns, sample, rows } = meta as { columns?: unknown; sample?: unknown; rows?: unknown };
  if (!Array.isArray(columns) || !Array.isArray(sample) || !sample.every(isRecord)) {
    return null;
  }
  const named = columns.filter(
    (c): c is { name: string; type?: unknown } => isRecord(c) && typeof c.name === 'string'
  );
  return {
    columns: named.map(c => ({ name: c.name, type: typeof c.type === 'string' ? c.type : '' })),
    sample,
    rows: typeof rows === 'number' ? rows : sample.length
  };
}

/** A cell an answer's receipt points at: its row (from 0) and column, either unknown (null). */
export interface ICitedAt {
  row: number | null;
  column: string | null;
}

/** Whether a receipt points at row `r` (a cell of it, or the row as a whole). */
function rowCited(cited: readonly ICitedAt[], r: number): boolean {
  return cited.some(c => c.row === r);
}

/** Whether a receipt points at the cell of row `r` and `column` (a column's cell when the row is unknown). */
function cellCited(cited: readonly ICitedAt[], r: number, column: string): boolean {
  return cited.some(c => c.column === column && (c.row === r || c.row === null));
}

/**
 * A dataset's first rows, formatted as pandas displays them (tableFormat.ts): numbers
 * right-aligned, every cell on one line, clipped, its whole text on hover; a click on a
 * clipped cell shows it whole (and a second click clips it again). The cells an answer's
 * receipt points at are marked, and a row past the first rows is said to be.
 */
export function DataTable({
  table,
  cited = []
}: {
  table: ITablePreview;
  cited?: readonly ICitedAt[];
}): JSX.Element {
  const unseen = cited
    .map(c => c.row)
    .filter((r): r is number => r !== null && r >= table.sample.length);
  const formatted = formatTable(table.columns, table.sample);
  const [open, setOpen] = React.useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string): void =>
    setOpen(now => {
      const next = new Set(now);
      if (!next.delete(key)) {
        next.add(key);
      }
      return next;
    });
  const scroll = React.useRef<HTMLDivElement>(null);
  const wide = useWideContent(scroll, table);
  return (
    <div className="jp-AnalystTable-frame">
      <div className="jp-AnalystTable-scroll" ref={scroll} data-wide={wide.more ? 'true' : 'false'}>
        <table className="jp-AnalystTable">
          <thead>
            <tr>
              {formatted.columns.map(c => (
                <th
                  key={c.name}
                  className={`jp-AnalystTable-${c.align}`}
                  data-kind={c.kind}
                  title={c.type ? `${c.name} (${c.type})` : c.name}
                >
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {formatted.rows.map((cells, r) => (
              <tr
                key={r}
                className={rowCited(cited, r) ? 'jp-mod-citedRow' : undefined}
                data-row={r}
              >
                {cells.map((text, c) => {
                  const key = `${r}:${c}`;
                  const expanded = open.has(key);
                  const marked = cellCited(cited, r, formatted.columns[c].name);
                  return (
                    <td
                      key={c}
                      className={
                        `jp-AnalystTable-${formatted.columns[c].align}` +
                        (expanded ? ' jp-mod-expanded' : '') +
                        (marked ? ' jp-mod-cited' : '')
                      }
                      aria-current={marked ? 'true' : undefined}
                      title={text}
                      onClick={() => toggle(key)}
                    >
                      {text}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
        {unseen.length > 0 && (
          <div className="jp-AnalystTable-citedPast" role="note">
            The cited row {unseen.map(r => (r + 1).toLocaleString('en-US')).join(', ')} is past the
            rows shown here.
          </div>
        )}
        {table.sample.length < table.rows && (
          <div className="jp-AnalystTable-more">
            first {table.sample.length} of {table.rows.toLocaleString('en-US')} rows
          </div>
        )}
      </div>
      <WideCue wide={wide} />
    </div>
  );
}
