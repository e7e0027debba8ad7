/** The `find` tool: the best matches for the user's words. */

import { count, defined, objects, text } from './read';
import { builtin, type ViewOf } from './view';

export type FindView = ViewOf<'find', 'matches'>;
type Found = FindView['matches'][number];

export const FIND = builtin<'find', FindView>({
  tool: 'find',
  label: 'Search',
  parse: r =>
    Array.isArray(r.matches)
      ? defined<FindView>({
          query: text(r.query),
          matches: objects(r.matches).map(m =>
            defined({
              kind: (text(m.kind) ?? 'table') as Found['kind'],
              name: text(m.name) ?? '',
              score: count(m.score) ?? 0,
              id: text(m.id),
              detail: text(m.detail)
            })
          ),
          note: text(r.note)
        })
      : null
});
