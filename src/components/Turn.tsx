import * as React from 'react';

import type { ThreadView, TurnItem, TurnView } from '../model';
import { TURN_END_LINE } from '../model/reasons';
import { verifiable } from '../model/verifiedAnswer';
import { StepNumbersContext } from './cards/Details';
import { ItemCard, itemKey } from './cards/ItemCard';
import { stepNumbers, turnSummary } from './cards/stepNames';
import type { IAnswerReceipts } from './receipts/AnswerReceipts';
import { receiptSteps } from './receipts/receiptWords';
import { StateStrip } from './StateStrip';
import { ThinkingLine } from './ThinkingLine';
import { TurnCost } from './TurnCost';
import { DefinitionsUsed, SuggestedDefinition } from './TeamDefinitions';
import { ContextFolderOffered, VerifyAnswer } from './VerifyAnswer';

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

/** An item of a turn as it is shown: is it the answer, and the names the answer cites that do not exist. */
export interface ShownItem {
  item: TurnItem;
  isAnswer: boolean;
  flagged: string[];
}

/**
 * The items a turn shows, each fact once: the answer event not again when the streamed
 * text said it (the text card carries its flags), and the turn's "flagged" guard not
 * beside an answer that shows its flags.
 */
export function shownItems(items: readonly TurnItem[]): ShownItem[] {
  const answerText = answeredBy(items);
  const answer = items.find(i => i.kind === 'answer');
  const flagged = answer?.kind === 'answer' ? answer.flagged : [];
  const out: ShownItem[] = [];
  items.forEach((item, index) => {
    if (answerText !== null && item.kind === 'answer') {
      return;
    }
    if (item.kind === 'guard' && item.reason === 'invented_name_flagged' && flagged.length > 0) {
      return;
    }
    const isAnswer = index === answerText || item.kind === 'answer';
    out.push({ item, isAnswer, flagged: isAnswer ? flagged : [] });
  });
  return out;
}

/**
 * The receipts of a turn's answer, once its end gives them: null while it runs, and when
 * it has no answer or no receipts.
 */
export function answerReceipts(turn: TurnView, turns: readonly TurnView[]): IAnswerReceipts | null {
  const answer = turn.items.find(i => i.kind === 'answer');
  const end = turn.end;
  if (answer?.kind !== 'answer' || end === null) {
    return null;
  }
  const { cited, unsupported } = end.receipts;
  if (cited.length === 0 && unsupported.length === 0) {
    return null;
  }
  return {
    answer: answer.text,
    citations: cited,
    unsupported,
    steps: receiptSteps(turns),
    turn: turns.findIndex(t => t.turnId === turn.turnId) + 1
  };
}

export interface ITurnProps {
  turn: TurnView;
  view: ThreadView;
  threadId: string;
}

/** One turn: what was asked, its progress, its cards in the order they happened, how it ended. */
export function Turn({ turn, view, threadId }: ITurnProps): JSX.Element {
  const numbers = React.useMemo(() => stepNumbers(turn), [turn]);
  const summary = turn.status === 'running' ? null : turnSummary(turn.counters);
  const turns = view.turns;
  const receipts = React.useMemo(() => answerReceipts(turn, turns), [turn, turns]);
  const contextFolder = React.useContext(ContextFolderOffered);
  return (
    <article
      className="jp-AnalystTurn"
      data-turn-id={turn.turnId}
      data-status={turn.status}
      aria-busy={turn.status === 'running'}
    >
      {turn.prompt && <div className="jp-AnalystTurn-prompt">{turn.prompt}</div>}
      <StateStrip turn={turn} />
      <StepNumbersContext.Provider value={numbers}>
        {shownItems(turn.items).map(({ item, isAnswer, flagged }) => (
          <ItemCard
            key={itemKey(item)}
            item={item}
            turn={turn}
            view={view}
            threadId={threadId}
            isAnswer={isAnswer}
            flagged={flagged}
            receipts={isAnswer ? receipts : null}
          />
        ))}
      </StepNumbersContext.Provider>
      {turn.end && <DefinitionsUsed definitions={turn.end.receipts.definitions} />}
      {contextFolder && verifiable(turn) && (
        <VerifyAnswer
          threadId={threadId}
          turn={turns.findIndex(t => t.turnId === turn.turnId) + 1}
        />
      )}
      {contextFolder &&
        turn.end?.suggestions.map((suggestion, index) => (
          <SuggestedDefinition
            key={`${suggestion.call_id}:${suggestion.measure}`}
            threadId={threadId}
            turn={turns.findIndex(t => t.turnId === turn.turnId) + 1}
            index={index}
            suggestion={suggestion}
          />
        ))}
      {turn.status === 'running' && turn.thinking !== null && (
        <ThinkingLine key={turn.thinking.seq} since={turn.thinking.since} />
      )}
      {summary !== null && (
        <div className="jp-AnalystTurn-summary" data-summary="steps">
          {summary}
        </div>
      )}
      {turn.end?.ledger && <TurnCost ledger={turn.end.ledger} />}
      {turn.end && turn.end.status !== 'completed' && (
        <div
          className={`jp-AnalystTurn-end jp-AnalystTurn-${turn.end.status}`}
          role="status"
          data-end={turn.end.status}
        >
          {TURN_END_LINE[turn.end.status]}
          {turn.end.message ? `: ${turn.end.message}` : ''}
        </div>
      )}
    </article>
  );
}
