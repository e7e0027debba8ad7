import {
  canPreview,
  downloadName,
  formatSize,
  formatWhen,
  shortFingerprint
} from '../../components/artifacts/format';

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
