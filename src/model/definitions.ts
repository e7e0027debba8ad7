/**
 * The team's definitions in a turn: those its queries followed (cited with the answer), and
 * the measures it computed that the context folder lacks, which a person may save ("Save as
 * a definition": `POST threads/{id}/definitions/preview` shows the file, then
 * `POST threads/{id}/definitions` writes it). Nothing is written without the person's action.
 */

import type { components } from './api.generated';
import type { DefinitionCitation } from './events';
import type { IRefusal } from './verifiedAnswer';

type Schemas = components['schemas'];

/** `POST threads/{id}/definitions`'s body (and its preview's). */
export type SaveDefinitionBody = Schemas['SaveDefinition'];
/** A metric's file, as it would be written (`written` false) or was. */
export type SavedMetric = Schemas['SavedMetric'];

/** One line naming a definition an answer followed and where the folder writes it. */
export function definitionLine(definition: DefinitionCitation): string {
  const what = definition.definition === 'metric' ? 'metric' : 'verified query';
  return `${what} ${definition.name} (${definition.file})`;
}

/** What the panel says of a saved metric. */
export function savedLine(saved: SavedMetric): string {
  return `Saved as ${saved.file} of the team’s context: ${saved.definition}`;
}

/** What the panel says of a refused preview or save, in words that say what to do. */
export function refusedLine(refusal: IRefusal): string {
  if (refusal.reason === 'not_a_context_editor') {
    return 'You may not save definitions: only the context folder’s editors may.';
  }
  const hint = refusal.hint ? ` (${refusal.hint})` : '';
  return `Not saved: ${refusal.message}${hint}`;
}
