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
              rows: count(t.rows)
            })
          )
        }
      : null
});
