/** The `list_artifacts` tool: the thread's artifacts, newest last. */

import { defined, objects, text } from './read';
import { builtin, type ViewOf } from './view';

export type ListArtifactsView = ViewOf<'list_artifacts', 'artifacts'>;
type Listed = ListArtifactsView['artifacts'][number];

export const LIST_ARTIFACTS = builtin<'list_artifacts', ListArtifactsView>({
  tool: 'list_artifacts',
  label: 'Artifacts',
  parse: r =>
    Array.isArray(r.artifacts)
      ? defined<ListArtifactsView>({
          artifacts: objects(r.artifacts).map(a =>
            defined({
              id: text(a.id) ?? '',
              name: text(a.name) ?? '',
              type: (text(a.type) ?? 'file') as Listed['type'],
              made_by: text(a.made_by)
            })
          ),
          code_note: text(r.code_note)
        })
      : null,
  named: view => view.artifacts
});
