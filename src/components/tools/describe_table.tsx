import { DESCRIBE_TABLE } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { registerCard } from './registry';

/** `describe_table`: the table and its columns. */
registerCard(
  DESCRIBE_TABLE,
  summaryCard(view => `${view.name ?? ''}: ${view.columns.map(c => c.name).join(', ')}`)
);
