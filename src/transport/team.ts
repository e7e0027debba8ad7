/**
 * What the panel asks of the server about the team: the caller's budgets, and verifying a
 * turn's answer into the context folder (its refusals throw the API's error, as every call does).
 */

import type { BudgetReply } from '../model/budget';
import type { SaveDefinitionBody, SavedMetric } from '../model/definitions';
import type { VerifiedAnswer, VerifyAnswerBody } from '../model/verifiedAnswer';
import type { AnalystClient } from './api';

/** `GET budget`: what the caller may still spend (with the thread's own budgets, given one). */
export async function budget(client: AnalystClient, threadId?: string): Promise<BudgetReply> {
  const response = await client.request(
    'budget',
    {},
    threadId ? { thread_id: threadId } : undefined
  );
  return (await response.json()) as BudgetReply;
}

/** `POST threads/{id}/verified-answers`: a completed turn's answer made a verified query and a suite task. */
export async function verifyAnswer(
  client: AnalystClient,
  threadId: string,
  body: VerifyAnswerBody
): Promise<VerifiedAnswer> {
  const response = await client.request(
    `threads/${encodeURIComponent(threadId)}/verified-answers`,
    {
      method: 'POST',
      body: JSON.stringify(body)
    }
  );
  return (await response.json()) as VerifiedAnswer;
}

/**
 * `POST threads/{id}/definitions/preview` (`write` false: the file shown, nothing written) or
 * `POST threads/{id}/definitions` (written): a turn's suggested metric in the team's folder.
 */
export async function saveDefinition(
  client: AnalystClient,
  threadId: string,
  body: SaveDefinitionBody,
  write: boolean
): Promise<SavedMetric> {
  const path = `threads/${encodeURIComponent(threadId)}/definitions${write ? '' : '/preview'}`;
  const response = await client.request(path, { method: 'POST', body: JSON.stringify(body) });
  return (await response.json()) as SavedMetric;
}
