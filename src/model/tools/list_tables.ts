/** The `list_tables` tool: the source's tables and views. */

import { count, defined, objects, text } from './read';
import { builtin, type ViewOf } from './view';

export type ListTablesView = ViewOf<'list_tables', 'tables'>;

export const LIST_TABLES = builtin<'list_tables', ListTablesView>({
  tool: 'list_tables',
  label: 'Tables',
  parse: r =>
    Array.isArray(r.tables)
      ? {
          tables: objects(r.tables).map(t =>
            defined({
              name: text(t.name) ?? '',
              kind: text(t.kind) ?? 'table',
              rows: count(t.rows),
              // Said only when the rows are the engine's estimate, not a count.
              rows_estimated: t.rows_estimated === true ? true : undefined
            })
          )
        }
      : null
});
