import * as React from 'react';

import type { ThreadView, TurnItem, TurnView } from '../../model';
import { ArtifactCard } from './ArtifactCard';
import { ChartCard } from './ChartCard';
import { contextTitleOf } from './contextTitle';
import { GuardNote } from './GuardNote';
import { cardOf } from '../tools';
import { OtherToolCard } from './OtherToolCard';
import type { IAnswerReceipts } from '../receipts/AnswerReceipts';
import { TextCard } from './TextCard';

export interface IItemCardProps {
  item: TurnItem;
  turn: TurnView;
  view: ThreadView;
  threadId: string;
  /** For a text item: the answer the turn gave is this text. */
  isAnswer?: boolean;
  /** For the answer: the names it cites that do not exist. */
  flagged?: string[];
  /** For the answer: its receipts (null until the turn ends with them). */
  receipts?: IAnswerReceipts | null;
}

/** The card of one item of a turn. */
export function ItemCard({
  item,
  turn,
  view,
  threadId,
  isAnswer,
  flagged,
  receipts = null
}: IItemCardProps): JSX.Element {
  switch (item.kind) {
    case 'text':
      return (
        <TextCard
          text={item.text}
          answer={isAnswer}
          flagged={flagged}
          seq={item.firstSeq}
          context={contextTitleOf(turn, item.modelCall)}
          receipts={isAnswer ? receipts : null}
        />
      );
    case 'answer':
      return (
        <TextCard
          text={item.text}
          answer
          flagged={item.flagged}
          seq={item.seq}
          receipts={receipts}
        />
      );
    case 'guard':
      return <GuardNote notice={item} />;
    case 'artifact':
      return item.artifactType === 'image' ? (
        <ChartCard artifact={item} reused={!item.created} />
      ) : (
        <ArtifactCard artifact={item} reused={!item.created} />
      );
    case 'tool': {
      const context = contextTitleOf(turn, item.modelCall);
      // The tool's own card (components/tools/), given its view of the result; the generic one otherwise.
      const Card = cardOf(item.tool);
      if (Card === undefined) {
        return <OtherToolCard card={item} context={context} />;
      }
      return (
        <Card
          card={item}
          detail={item.result?.view ?? null}
          view={view}
          threadId={threadId}
          context={context}
        />
      );
    }
  }
}

/** A key for an item that stays the same while it grows (streamed text, a card's result). */
export function itemKey(item: TurnItem): string {
  switch (item.kind) {
    case 'text':
      return `text-${item.firstSeq}`;
    case 'tool':
      return `tool-${item.callId}`;
    default:
      return `${item.kind}-${item.seq}`;
  }
}
