import { CLARIFY } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { registerCard } from './registry';

/** `clarify`: the question as the user reads it. */
registerCard(
  CLARIFY,
  summaryCard(view => view.question_for_user ?? view.asked ?? null)
);
