/** The `describe_table` tool: one table's columns, row count and first rows. */

import { columns, count, defined, holds, objects, text } from './read';
import { builtin, type ViewOf } from './view';

export type DescribeTableView = ViewOf<'describe_table', 'columns' | 'sample'>;

export const DESCRIBE_TABLE = builtin<'describe_table', DescribeTableView>({
  tool: 'describe_table',
  label: 'Table description',
  parse: r =>
    holds(r, 'name', 'columns')
      ? defined<DescribeTableView>({
          name: text(r.name),
          columns: columns(r.columns),
          rows: count(r.rows),
          sample: objects(r.sample)
        })
      : null
});
