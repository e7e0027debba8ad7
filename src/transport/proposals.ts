/**
 * The proposals of a thread: list them with their diffs, accept or reject changes, revert a
 * turn's accepted changes (docs/proposals.md). Each decision answers the proposal as it is then.
 */

import type { components } from '../model/api.generated';
import type { ProposalView } from '../model/proposals';
import type { AnalystClient } from './api';

export type IRevertResult = components['schemas']['RevertResult'];

function threadPath(threadId: string): string {
  return `threads/${encodeURIComponent(threadId)}`;
}

async function post<T>(client: AnalystClient, path: string, body: unknown): Promise<T> {
  const response = await client.request(path, { method: 'POST', body: JSON.stringify(body) });
  return (await response.json()) as T;
}

/** The thread's proposals, oldest first, each pending change with its diff. */
export async function listProposals(
  client: AnalystClient,
  threadId: string
): Promise<ProposalView[]> {
  const response = await client.request(`${threadPath(threadId)}/proposals`);
  return ((await response.json()) as { proposals: ProposalView[] }).proposals;
}

/** Accept or reject some changes of a proposal (`'all'`: every pending one). */
export function decideChanges(
  client: AnalystClient,
  threadId: string,
  proposalId: string,
  kind: 'accept' | 'reject',
  changeIds: string[] | 'all'
): Promise<ProposalView> {
  const path = `${threadPath(threadId)}/proposals/${encodeURIComponent(proposalId)}/${kind}`;
  return post(client, path, { cell_ids: changeIds });
}

/** Restore the notebook from the checkpoint taken before the turn's first accepted change. */
export function revertTurn(
  client: AnalystClient,
  threadId: string,
  turnId: string
): Promise<IRevertResult> {
  return post(client, `${threadPath(threadId)}/turns/${encodeURIComponent(turnId)}/revert`, {});
}
