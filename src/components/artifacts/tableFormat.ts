/**
 * A dataset's first rows as pandas displays a DataFrame: each column formatted as a whole,
 * by its type. Floats to pandas' default precision (6 digits), trailing zeros trimmed
 * alike down the column (`8684.080000000002` reads `8684.08`, `1.5` beside it `1.50`);
 * integers with no decimals; timestamps with a space for the `T`, and without their time
 * when every one of the column is at midnight (`2025-01-01`); missing values as pandas
 * says them (`NaN`, `NaT`, `None`). Pure: the table component (DataTable.tsx) lays it out.
 */

import type { JsonValue } from '../../model/events';

/** How a column is formatted and aligned. */
export type ColumnKind = 'float' | 'integer' | 'datetime' | 'boolean' | 'text';

export interface ColumnFormat {
  name: string;
  /** The type as the server gave it (Arrow's or the database's), for hover text. */
  type: string;
  kind: ColumnKind;
  /** Numbers are right-aligned, as pandas aligns them. */
  align: 'left' | 'right';
}

export interface FormattedTable {
  columns: ColumnFormat[];
  /** Each row's cells, in column order, as text. */
  rows: string[][];
}

/** pandas' `display.precision`. */
const PRECISION = 6;

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?([+-]\d{2}:?\d{2}|Z)?$/;

/**
 * The kind of a column from its type name (Arrow's `double`, `timestamp[us]`, DuckDB's
 * `DOUBLE`, `TIMESTAMP`, `DECIMAL(18,2)`), or from its values when the name says nothing.
 *
 * >>> columnKind('decimal128(18, 2)', []) === 'float'
 */
export function columnKind(type: string, values: readonly JsonValue[]): ColumnKind {
  const t = type.toLowerCase();
  if (/^(double|float|real|halffloat|decimal|numeric)/.test(t)) {
    return 'float';
  }
  if (/^(u?int|bigint|smallint|tinyint|hugeint|integer|ubigint|usmallint|utinyint)/.test(t)) {
    return 'integer';
  }
  if (/^(timestamp|datetime)/.test(t)) {
    return 'datetime';
  }
  if (/^bool/.test(t)) {
    return 'boolean';
  }
  if (t !== '') {
    return 'text';
  }
  const present = values.filter(v => v !== null && v !== undefined);
  if (present.length === 0) {
    return 'text';
  }
  if (present.every(v => typeof v === 'number')) {
    return present.every(v => Number.isInteger(v)) ? 'integer' : 'float';
  }
  if (present.every(v => typeof v === 'boolean')) {
    return 'boolean';
  }
  if (present.every(v => typeof v === 'string' && ISO_TIMESTAMP.test(v))) {
    return 'datetime';
  }
  return 'text';
}

/** A value that is not a number of the column (`'nan'`, `'inf'` as the server spells them). */
function asNumber(value: JsonValue): number | null {
  if (typeof value === 'number') {
    return value;
  }
  if (typeof value === 'string') {
    const special: Record<string, number> = { nan: NaN, inf: Infinity, '-inf': -Infinity };
    if (Object.prototype.hasOwnProperty.call(special, value.toLowerCase())) {
      return special[value.toLowerCase()];
    }
  }
  return null;
}

/** Trailing zeros dropped alike from every number (all have as many decimals), keeping one. */
function trimZeros(texts: string[]): string[] {
  let out = texts;
  while (out.length > 0 && out.every(s => s.endsWith('0') && !/\.\d$/.test(s))) {
    out = out.map(s => s.slice(0, -1));
  }
  return out;
}

/**
 * A float column's cells: fixed to 6 decimals, trailing zeros trimmed alike; in scientific
 * notation, as pandas does, when a value is too small for 6 decimals or a large one too long.
 *
 * >>> formatFloats([8684.080000000002, 1.5]) // ['8684.08', '1.50']
 */
export function formatFloats(values: readonly (number | null)[]): string[] {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const abs = finite.map(Math.abs);
  const fixed = finite.map(v => v.toFixed(PRECISION));
  const tooLong = fixed.some(s => s.length > PRECISION + 6);
  const scientific =
    abs.some(a => a > 0 && a < 10 ** -PRECISION) || (tooLong && abs.some(a => a > 1e6));
  const texts = finite.map(v =>
    scientific ? v.toExponential(PRECISION).replace(/e([+-])(\d)$/, 'e$10$2') : v.toFixed(PRECISION)
  );
  const trimmed = scientific ? texts : trimZeros(texts);
  let next = 0;
  return values.map(v => {
    if (v === null || Number.isNaN(v)) {
      return 'NaN';
    }
    if (!Number.isFinite(v)) {
      return v > 0 ? 'inf' : '-inf';
    }
    return trimmed[next++];
  });
}

/**
 * A timestamp column's cells: `T` as a space; the time dropped when every one is at midnight
 * (with no zone), as pandas shows dates.
 */
export function formatTimestamps(values: readonly (string | null)[]): string[] {
  const spaced = values.map(v => (v === null ? null : v.replace('T', ' ')));
  const midnight = /^(\d{4}-\d{2}-\d{2}) 00:00(:00(\.0+)?)?$/;
  const dateOnly = spaced.every(v => v === null || midnight.test(v));
  return spaced.map(v => {
    if (v === null) {
      return 'NaT';
    }
    return dateOnly ? v.slice(0, 10) : v;
  });
}

function plain(value: JsonValue): string {
  if (value === null || value === undefined) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return value ? 'True' : 'False';
  }
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function formatColumn(kind: ColumnKind, values: readonly JsonValue[]): string[] {
  switch (kind) {
    case 'float':
      if (values.some(v => v !== null && asNumber(v) === null)) {
        return values.map(plain);
      }
      return formatFloats(values.map(v => (v === null ? null : asNumber(v))));
    case 'integer':
      return values.map(v => (v === null ? '<NA>' : plain(v)));
    case 'datetime':
      if (values.some(v => v !== null && typeof v !== 'string')) {
        return values.map(plain);
      }
      return formatTimestamps(values as (string | null)[]);
    default:
      return values.map(plain);
  }
}

/** The rows of a preview (`sample`, JSON values by column name) formatted column by column. */
export function formatTable(
  columns: readonly { name: string; type: string }[],
  sample: readonly Record<string, JsonValue>[]
): FormattedTable {
  const formats: ColumnFormat[] = [];
  const cells: string[][] = [];
  for (const column of columns) {
    const values = sample.map(row =>
      Object.prototype.hasOwnProperty.call(row, column.name) ? row[column.name] : null
    );
    const kind = columnKind(column.type, values);
    formats.push({
      name: column.name,
      type: column.type,
      kind,
      align: kind === 'float' || kind === 'integer' ? 'right' : 'left'
    });
    cells.push(formatColumn(kind, values));
  }
  return { columns: formats, rows: sample.map((_, r) => cells.map(column => column[r])) };
}
