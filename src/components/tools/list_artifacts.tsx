import { LIST_ARTIFACTS } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { toolCard } from './card';

/** `list_artifacts`: the artifacts' names. */
export const LIST_ARTIFACTS_CARD = toolCard(
  LIST_ARTIFACTS,
  summaryCard(view => view.artifacts.map(a => a.name).join(', ') || 'no artifacts yet')
);
