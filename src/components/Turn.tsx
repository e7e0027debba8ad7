import * as React from 'react';

import type { ThreadView, TurnItem, TurnView } from '../model';
import { ItemCard, itemKey } from './cards/ItemCard';
import { StateStrip } from './StateStrip';
import { ThinkingLine } from './ThinkingLine';

/**
 * The text item that is the turn's answer: the last stretch of streamed text before the
 * answer, when it says the same (the model streams its answer, then the turn records it).
 */
export function answeredBy(items: readonly TurnItem[]): number | null {
  const answer = items.findIndex(i => i.kind === 'answer');
  if (answer < 0) {
    return null;
  }
  const text = (items[answer] as { text: string }).text.trim();
  for (let i = answer - 1; i >= 0; i--) {
    const item = items[i];
    if (item.kind === 'text') {
      return item.text.trim() === text ? i : null;
    }
  }
  return null;
}

export interface ITurnProps {
  turn: TurnView;
  view: ThreadView;
  threadId: string;
}

/** One turn: what was asked, its progress, its cards in the order they happened, how it ended. */
export function Turn({ turn, view, threadId }: ITurnProps): JSX.Element {
  const answerText = answeredBy(turn.items);
  return (
    <article
      className="jp-AnalystTurn"
      data-turn-id={turn.turnId}
      data-status={turn.status}
      aria-busy={turn.status === 'running'}
    >
      {turn.prompt && <div className="jp-AnalystTurn-prompt">{turn.prompt}</div>}
      <StateStrip turn={turn} />
      {turn.items.map((item, index) =>
        answerText !== null && item.kind === 'answer' ? null : (
          <ItemCard
            key={itemKey(item)}
            item={item}
            turn={turn}
            view={view}
            threadId={threadId}
            isAnswer={index === answerText}
          />
        )
      )}
      {turn.status === 'running' && turn.thinking !== null && (
        <ThinkingLine key={turn.thinking.seq} since={turn.thinking.since} />
      )}
      {turn.end && turn.end.status !== 'completed' && (
        <div
          className={`jp-AnalystTurn-end jp-AnalystTurn-${turn.end.status}`}
          role="status"
          data-end={turn.end.status}
        >
          {turn.end.status === 'interrupted'
            ? 'Stopped'
            : turn.end.status === 'needs_input'
              ? 'Waiting for your answer: your next message answers the question above'
              : 'The turn ended with an error'}
          {turn.end.message ? `: ${turn.end.message}` : ''}
        </div>
      )}
    </article>
  );
}
