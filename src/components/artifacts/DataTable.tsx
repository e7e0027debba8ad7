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

/**
 * A dataset's first rows, formatted as pandas displays them (tableFormat.ts): numbers
 * right-aligned, every cell on one line, clipped, its whole text on hover; a click on a
 * clipped cell shows it whole (and a second click clips it again).
 */
export function DataTable({ table }: { table: ITablePreview }): JSX.Element {
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
              <tr key={r}>
                {cells.map((text, c) => {
                  const key = `${r}:${c}`;
                  const expanded = open.has(key);
                  return (
                    <td
                      key={c}
                      className={
                        `jp-AnalystTable-${formatted.columns[c].align}` +
                        (expanded ? ' jp-mod-expanded' : '')
                      }
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
