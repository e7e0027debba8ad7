/**
 * The hover text of what a model call produced: how big its prompt was, and of what.
 */

import type { ContextUsageView, TurnView } from '../../model';

/** "Model call 2: 621 of 16,000 tokens (rules 450, state 27, ...); 4 messages". */
export function contextTitle(usage: ContextUsageView): string {
  const parts = Object.entries(usage.parts)
    .filter(([, tokens]) => tokens > 0)
    .map(([part, tokens]) => `${part} ${tokens.toLocaleString('en-US')}`)
    .join(', ');
  const lines = [
    `Model call ${usage.call}: ${usage.tokens.toLocaleString('en-US')} of ${usage.budget.toLocaleString('en-US')} tokens` +
      (parts ? ` (${parts})` : ''),
    `${usage.messages} message${usage.messages === 1 ? '' : 's'}` +
      (usage.turns.length ? `; earlier turns ${usage.turns.join(', ')}` : '') +
      (usage.droppedTurns ? `; ${usage.droppedTurns} left out for the budget` : '') +
      (usage.summarizedThrough ? `; summary through turn ${usage.summarizedThrough}` : '')
  ];
  return lines.join('\n');
}

/** The hover text of what model call `call` of `turn` produced (none when unknown). */
export function contextTitleOf(turn: TurnView, call: number | null): string | undefined {
  if (call === null) {
    return undefined;
  }
  const usage = turn.context.find(c => c.call === call);
  return usage === undefined ? undefined : contextTitle(usage);
}
