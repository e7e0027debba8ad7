import { LIST_ARTIFACTS } from '../../model';
import { summaryCard } from '../cards/OtherToolCard';
import { registerCard } from './registry';

/** `list_artifacts`: the artifacts' names. */
registerCard(
  LIST_ARTIFACTS,
  summaryCard(view => view.artifacts.map(a => a.name).join(', ') || 'no artifacts yet')
);
