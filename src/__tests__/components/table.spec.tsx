/**
 * Specs of a dataset preview's table: values formatted column by column as pandas displays
 * a DataFrame, numbers right-aligned, long cells on one line with their whole text on hover.
 */

import * as React from 'react';

import { DataTable, tablePreviewOf } from '../../components/artifacts/DataTable';
import {
  columnKind,
  formatFloats,
  formatTable,
  formatTimestamps
} from '../../components/artifacts/tableFormat';
import { renderStatic } from '../staticMarkup';

/** The demo's revenue_by_region preview, as `GET artifacts/{id}/preview` answers it. */
const PREVIEW = {
  data: { 'text/plain': 'revenue_by_region: 60 rows x 4 columns' },
  metadata: {
    rows: 60,
    shown: 3,
    columns: [
      { name: 'region', type: 'string' },
      { name: 'month', type: 'timestamp[us]' },
      { name: 'revenue', type: 'double' },
      { name: 'orders', type: 'int64' }
    ],
    sample: [
      { region: 'Central', month: '2025-01-01T00:00:00', revenue: 7620.66, orders: 12 },
      { region: 'South', month: '2025-01-01T00:00:00', revenue: 8684.080000000002, orders: 7 },
      { region: 'West '.repeat(60), month: '2025-02-01T00:00:00', revenue: 4295.7, orders: null }
    ]
  }
};

describe('a preview table formatted as pandas displays it', () => {
  it('gives floats a sensible precision, trimmed alike down the column', () => {
    expect(formatFloats([8684.080000000002, 7620.66, 4295.7])).toEqual([
      '8684.08',
      '7620.66',
      '4295.70'
    ]);
    expect(formatFloats([1, 2.5])).toEqual(['1.0', '2.5']);
    expect(formatFloats([0.1 + 0.2])).toEqual(['0.3']);
    expect(formatFloats([1 / 3, null, NaN])).toEqual(['0.333333', 'NaN', 'NaN']);
    expect(formatFloats([-2.25, Infinity])).toEqual(['-2.25', 'inf']);
    // Too small for six decimals: scientific, as pandas switches.
    expect(formatFloats([1.5e-9, 2])).toEqual(['1.500000e-09', '2.000000e+00']);
  });

  it('shows timestamps without T, and a column all at midnight as dates', () => {
    expect(formatTimestamps(['2025-01-01T00:00:00', '2025-02-01T00:00:00', null])).toEqual([
      '2025-01-01',
      '2025-02-01',
      'NaT'
    ]);
    expect(formatTimestamps(['2025-01-01T00:00:00', '2025-01-01T13:45:10'])).toEqual([
      '2025-01-01 00:00:00',
      '2025-01-01 13:45:10'
    ]);
  });

  it('reads a column kind from Arrow or database type names, else from the values', () => {
    expect(columnKind('double', [])).toBe('float');
    expect(columnKind('decimal128(18, 2)', [])).toBe('float');
    expect(columnKind('DOUBLE', [])).toBe('float');
    expect(columnKind('int64', [])).toBe('integer');
    expect(columnKind('BIGINT', [])).toBe('integer');
    expect(columnKind('timestamp[us, tz=UTC]', [])).toBe('datetime');
    expect(columnKind('TIMESTAMP', [])).toBe('datetime');
    expect(columnKind('string', [1])).toBe('text');
    expect(columnKind('', [1, 2])).toBe('integer');
    expect(columnKind('', [1.5, null])).toBe('float');
    expect(columnKind('', ['2025-01-01T00:00:00'])).toBe('datetime');
  });

  it('formats a whole preview: integers with no decimals, missing values as pandas says', () => {
    const table = tablePreviewOf(PREVIEW);
    expect(table).not.toBeNull();
    const formatted = formatTable(table!.columns, table!.sample);
    expect(formatted.columns.map(c => c.align)).toEqual(['left', 'left', 'right', 'right']);
    expect(formatted.rows[1]).toEqual(['South', '2025-01-01', '8684.08', '7']);
    expect(formatted.rows[2].slice(1)).toEqual(['2025-02-01', '4295.70', '<NA>']);
  });

  it('renders one line a row: every cell keeps its whole text as hover text', () => {
    const host = renderStatic(<DataTable table={tablePreviewOf(PREVIEW)!} />);
    const cells = Array.from(host.querySelectorAll('tbody tr:nth-child(2) td'));
    expect(cells.map(c => c.textContent)).toEqual(['South', '2025-01-01', '8684.08', '7']);
    expect(cells[2].className).toContain('jp-AnalystTable-right');
    const long = host.querySelector('tbody tr:nth-child(3) td');
    expect(long?.getAttribute('title')).toBe('West '.repeat(60));
    expect(host.textContent).not.toContain('T00:00:00');
    expect(host.textContent).not.toContain('8684.080000000002');
    expect(host.querySelector('.jp-AnalystTable-more')?.textContent).toBe('first 3 of 60 rows');
  });

  it('is no table for a bundle without rows (an image, an older server)', () => {
    expect(tablePreviewOf({ data: { 'image/png': 'AAAA' }, metadata: {} })).toBeNull();
    expect(tablePreviewOf({ data: { 'text/html': '<table/>' } })).toBeNull();
  });
});
