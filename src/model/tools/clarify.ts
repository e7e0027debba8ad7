/** The `clarify` tool: the question a turn ends with, and its candidate answers. */

import { defined, holds, strings, text } from './read';
import { builtin, type ViewOf } from './view';

export type ClarifyView = ViewOf<'clarify', 'candidates'>;

export const CLARIFY = builtin<'clarify', ClarifyView>({
  tool: 'clarify',
  label: 'Question',
  parse: r =>
    holds(r, 'asked', 'question_for_user', 'candidates')
      ? defined<ClarifyView>({
          asked: text(r.asked),
          candidates: strings(r.candidates),
          question_for_user: text(r.question_for_user)
        })
      : null
});
