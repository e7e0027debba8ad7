import {
  canPreview,
  downloadName,
  formatSize,
  formatWhen,
  shortFingerprint
} from '../../components/artifacts/format';
import { rowCount } from '../../components/EmptyThread';
import { LIST_TABLES } from '../../model';

describe('artifact formatting', () => {
  it('shortens a fingerprint to 12 hex digits after its algorithm, as the CLI does', () => {
    const fp = 'sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
    expect(shortFingerprint(fp)).toBe('0123456789ab');
    expect(shortFingerprint(fp)).toBe(fp.slice(7, 19));
    expect(shortFingerprint('abcdef0123456789')).toBe('abcdef012345');
    expect(shortFingerprint(null)).toBe('—');
  });

  it('sizes bytes in the largest unit under 1024', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1023)).toBe('1023 B');
    expect(formatSize(1024)).toBe('1.0 KB');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(5 * 1024 * 1024)).toBe('5.0 MB');
  });

  it('names a download with an extension from its type when it has none', () => {
    expect(
      downloadName({ name: 'revenue_by_region', mime: 'application/vnd.apache.parquet' })
    ).toBe('revenue_by_region.parquet');
    expect(downloadName({ name: 'outputs/chart.png', mime: 'image/png' })).toBe('chart.png');
    expect(downloadName({ name: 'notes', mime: 'application/x-unknown' })).toBe('notes');
    // An extension that is not its type's is part of the name (the server names it so too).
    expect(downloadName({ name: 'sales.2024', mime: 'application/vnd.apache.parquet' })).toBe(
      'sales.2024.parquet'
    );
    expect(downloadName({ name: 'outputs/t.PQ', mime: 'application/vnd.apache.parquet' })).toBe(
      't.PQ'
    );
  });

  it('shows a timestamp to the minute, and unreadable ones as given', () => {
    expect(formatWhen('not a date')).toBe('not a date');
    expect(formatWhen('2024-03-05T07:08:09')).toBe('2024-03-05 07:08');
  });

  it('previews tables, images and text, not other files', () => {
    expect(canPreview({ type: 'dataset', mime: 'application/vnd.apache.parquet' })).toBe(true);
    expect(canPreview({ type: 'image', mime: 'image/png' })).toBe(true);
    expect(canPreview({ type: 'file', mime: 'text/csv' })).toBe(true);
    expect(canPreview({ type: 'file', mime: 'application/zip' })).toBe(false);
  });
});

describe('row counts', () => {
  it('says an engine estimate as one, a count as it is', () => {
    expect(rowCount(1200)).toBe('1,200 rows');
    expect(rowCount(1)).toBe('1 row');
    expect(rowCount(50_000_000, true)).toBe('about 50,000,000 rows');
  });

  it("keeps a list_tables result's estimate, and says nothing where the rows were counted", () => {
    const view = LIST_TABLES.parse({
      tables: [
        { name: 'events', kind: 'table', rows: 50_000_000, rows_estimated: true },
        { name: 'kinds', kind: 'table', rows: 3 }
      ]
    });
    expect(view?.tables).toEqual([
      { name: 'events', kind: 'table', rows: 50_000_000, rows_estimated: true },
      { name: 'kinds', kind: 'table', rows: 3 }
    ]);
  });
});
