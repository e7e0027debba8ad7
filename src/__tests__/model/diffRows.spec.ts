/**
 * A replaced cell's lines as two columns: kept lines on both sides, between them the removed
 * lines beside the added ones.
 */

import { sideBySideRows, type IDiffLine } from '../../model';

const same = (text: string): IDiffLine => ({ kind: 'same', text });
const del = (text: string): IDiffLine => ({ kind: 'del', text });
const add = (text: string): IDiffLine => ({ kind: 'add', text });

describe('side-by-side rows', () => {
  it('pairs removed lines with the added lines after them, kept lines on both sides', () => {
    expect(sideBySideRows([same('a'), del('y = 2'), add('y = 3'), same('b')])).toEqual([
      { before: same('a'), after: same('a') },
      { before: del('y = 2'), after: add('y = 3') },
      { before: same('b'), after: same('b') }
    ]);
  });

  it('puts blanks against the longer run', () => {
    expect(sideBySideRows([del('x'), add('p'), add('q'), add('r')])).toEqual([
      { before: del('x'), after: add('p') },
      { before: null, after: add('q') },
      { before: null, after: add('r') }
    ]);
    expect(sideBySideRows([del('x'), del('y'), same('z')])).toEqual([
      { before: del('x'), after: null },
      { before: del('y'), after: null },
      { before: same('z'), after: same('z') }
    ]);
  });

  it('pairs a hunk’s removed and added lines whatever their interleaving in nbdime’s diff', () => {
    // 'y = 2\nprint(y)' → "y = 3\nprint('y is', y)": line 0 patched, a line added, line 1 removed.
    expect(
      sideBySideRows([del('y = 2'), add('y = 3'), add("print('y is', y)"), del('print(y)')])
    ).toEqual([
      { before: del('y = 2'), after: add('y = 3') },
      { before: del('print(y)'), after: add("print('y is', y)") }
    ]);
    expect(sideBySideRows([del('a1'), add('a2'), del('b1'), add('b2')])).toEqual([
      { before: del('a1'), after: add('a2') },
      { before: del('b1'), after: add('b2') }
    ]);
  });

  it('keeps every line on its own side, in order', () => {
    const lines = [same('k'), del('1'), del('2'), add('A'), same('m'), add('B'), del('3')];
    const rows = sideBySideRows(lines);
    const left = rows.map(r => r.before).filter(Boolean);
    const right = rows.map(r => r.after).filter(Boolean);
    expect(left).toEqual(lines.filter(l => l.kind !== 'add'));
    expect(right).toEqual(lines.filter(l => l.kind !== 'del'));
  });

  it('has no rows for no lines', () => {
    expect(sideBySideRows([])).toEqual([]);
  });
});
