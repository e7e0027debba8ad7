/**
 * The artifacts a tool card shows: those recorded while its call ran, then those its
 * result names (a reused step records none: they come from the thread's inventory,
 * as the events recorded them in an earlier turn).
 */

import { toolModel, type ArtifactView, type ThreadView, type ToolCard } from '../../model';

/** An artifact on a card, and whether it was reused rather than made by this step. */
export interface CardArtifact {
  artifact: ArtifactView;
  reused: boolean;
}

export function cardArtifacts(card: ToolCard, view: ThreadView): CardArtifact[] {
  const out: CardArtifact[] = [];
  const seen = new Set<string>();
  const add = (artifact: ArtifactView): void => {
    if (!seen.has(artifact.artifactId)) {
      seen.add(artifact.artifactId);
      out.push({ artifact, reused: card.reused || !artifact.created });
    }
  };
  card.artifacts.forEach(add);
  const model = toolModel(card.tool);
  const shown = card.result?.view;
  const named = shown != null && model?.named !== undefined ? model.named(shown) : [];
  for (const id of card.artifactIds) {
    const known = view.artifacts[id];
    if (known !== undefined) {
      add(known);
      continue;
    }
    const fromResult = named.find(a => a.id === id);
    add({
      artifactId: id,
      name: fromResult?.name ?? id,
      artifactType: fromResult?.type ?? model?.makes ?? 'file',
      fingerprint: '',
      shortFingerprint: '',
      created: false,
      at: card.endedAt ?? '',
      seq: card.seq
    });
  }
  return out;
}
