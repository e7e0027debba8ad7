import { LIST_TABLES } from '../../model';
import { rowCount } from '../EmptyThread';
import { summaryCard } from '../cards/OtherToolCard';
import { toolCard } from './card';

/** `list_tables`: the tables, with their row counts. */
export const LIST_TABLES_CARD = toolCard(
  LIST_TABLES,
  summaryCard(view =>
    view.tables
      .map(t =>
        t.rows == null ? t.name : `${t.name} (${rowCount(t.rows, t.rows_estimated === true)})`
      )
      .join(', ')
  )
);
