import { CLARIFY } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { toolCard } from './card';

/** `clarify`: the question as the user reads it. */
export const CLARIFY_CARD = toolCard(
  CLARIFY,
  summaryCard(view => view.question_for_user ?? view.asked ?? null)
);
