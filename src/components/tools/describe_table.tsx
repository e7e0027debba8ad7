import { DESCRIBE_TABLE } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { toolCard } from './card';

/** `describe_table`: the table and its columns. */
export const DESCRIBE_TABLE_CARD = toolCard(
  DESCRIBE_TABLE,
  summaryCard(view => `${view.name ?? ''}: ${view.columns.map(c => c.name).join(', ')}`)
);
