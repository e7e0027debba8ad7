/**
 * What the ⓘ of what a model call produced says: how big its prompt was, and of what.
 *
 * Two figures can describe one prompt: the estimate it was assembled to (four characters
 * a token, held to the budget, by part) and, once the reply is in, the count of the model
 * server (its own tokenizer). They differ, so each is said as what it is: the count first
 * when there is one, the estimate labelled as an estimate.
 */

import type { ContextUsageView, TurnView } from '../../model';

function tokens(count: number): string {
  return `${count.toLocaleString('en-US')} token${count === 1 ? '' : 's'}`;
}

/** "prompt 1,234 tokens · reply 56 tokens", as the server counted them; null when it did not. */
function countedText(usage: ContextUsageView): string | null {
  if (usage.promptTokens === null) {
    return null;
  }
  const reply = usage.completionTokens === null ? '' : ` · reply ${tokens(usage.completionTokens)}`;
  return `prompt ${tokens(usage.promptTokens)}${reply}`;
}

/**
 * "Model call 2: 621 of 16,000 tokens, estimated (rules 450, state 27, ...)\n4 messages"; with
 * the server's count, "Model call 2: prompt 640 tokens · reply 56 tokens, counted by the
 * model server\nEstimated before sending: 621 of 16,000 tokens (...)\n4 messages".
 */
export function contextTitle(usage: ContextUsageView): string {
  const parts = Object.entries(usage.parts)
    .filter(([, count]) => count > 0)
    .map(([part, count]) => `${part} ${count.toLocaleString('en-US')}`)
    .join(', ');
  const estimate = `${usage.tokens.toLocaleString('en-US')} of ${tokens(usage.budget)}`;
  const byPart = parts ? ` (${parts})` : '';
  const counted = countedText(usage);
  const size =
    counted === null
      ? [`Model call ${usage.call}: ${estimate}, estimated${byPart}`]
      : [
          `Model call ${usage.call}: ${counted}, counted by the model server`,
          `Estimated before sending: ${estimate}${byPart}`
        ];
  return [
    ...size,
    `${usage.messages} message${usage.messages === 1 ? '' : 's'}` +
      (usage.turns.length ? `; earlier turns ${usage.turns.join(', ')}` : '') +
      (usage.droppedTurns ? `; ${usage.droppedTurns} left out for the budget` : '') +
      (usage.summarizedThrough ? `; summary through turn ${usage.summarizedThrough}` : '')
  ].join('\n');
}

/** What the ⓘ of what model call `call` of `turn` produced says (none when unknown). */
export function contextTitleOf(turn: TurnView, call: number | null): string | undefined {
  if (call === null) {
    return undefined;
  }
  const usage = turn.context.find(c => c.call === call);
  return usage === undefined ? undefined : contextTitle(usage);
}
