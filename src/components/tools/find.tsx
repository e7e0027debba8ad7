import { FIND } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { registerCard } from './registry';

/** `find`: the names found, or why none. */
registerCard(
  FIND,
  summaryCard(view => view.matches.map(m => m.name).join(', ') || view.note || 'nothing found')
);
