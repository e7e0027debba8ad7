/** The `read_cells` tool: cells of the attached notebook. */

import { count, defined, objects, strings, text } from './read';
import { builtin, type ViewOf } from './view';

export type ReadCellsView = ViewOf<'read_cells', 'cells' | 'unknown'>;

export const READ_CELLS = builtin<'read_cells', ReadCellsView>({
  tool: 'read_cells',
  label: 'Notebook cells',
  parse: r =>
    Array.isArray(r.cells)
      ? defined<ReadCellsView>({
          cells: objects(r.cells).map(c => ({
            id: text(c.id) ?? '',
            index: count(c.index) ?? 0,
            type: text(c.type) ?? null,
            source: text(c.source) ?? '',
            outputs: text(c.outputs) ?? ''
          })),
          unknown: strings(r.unknown),
          note: text(r.note)
        })
      : null
});
