/** The `run_sql` tool: a query's dataset; its steps are notebook cells, and bind a dataset. */

import { columns, count, defined, holds, isObject, objects, text } from './read';
import type { ToolArguments } from './registry';
import { builtin, type ViewOf } from './view';

export type RunSqlView = ViewOf<'run_sql', 'columns' | 'sample' | 'truncated'>;

const binds = (args: ToolArguments): string | undefined => text(args.name);

export const RUN_SQL = builtin<'run_sql', RunSqlView>({
  tool: 'run_sql',
  label: 'SQL',
  parse(r) {
    if (!holds(r, 'dataset', 'columns', 'rows', 'sample')) {
      return null;
    }
    const cap = isObject(r.row_cap) ? r.row_cap : undefined;
    return defined<RunSqlView>({
      dataset: text(r.dataset),
      artifact_id: text(r.artifact_id),
      rows: count(r.rows),
      columns: columns(r.columns),
      sample: objects(r.sample),
      shown: text(r.shown),
      truncated: r.truncated === true,
      row_cap: cap && {
        cap: count(cap.cap) ?? null,
        kept: count(cap.kept) ?? 0,
        dropped: count(cap.dropped) ?? null
      },
      intent_note: text(r.intent_note)
    });
  },
  makesCell: true,
  binds,
  purpose: args => binds(args) ?? null,
  makes: 'dataset'
});
