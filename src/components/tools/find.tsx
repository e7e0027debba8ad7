import { FIND } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { toolCard } from './card';

/** `find`: the names found, or why none. */
export const FIND_CARD = toolCard(
  FIND,
  summaryCard(view => view.matches.map(m => m.name).join(', ') || view.note || 'nothing found')
);
