/**
 * The panel's list of proposals with changes: read from the server (the client's
 * `GET threads/{id}/proposals`, answered here as the server answers it), nothing while the
 * thread made no proposal, read again when a decision is said anywhere, each a link to its
 * card with the keyboard on the card's first change.
 */

import * as React from 'react';
import { act } from 'react';

import { PendingProposals, pendingLabel } from '../../components/PendingProposals';
import { AnalystContext } from '../../context';
import { proposalsChanged } from '../../hooks/proposalChanges';
import {
  pendingProposals,
  proposalCalls,
  type ChangeView,
  type ProposalView,
  type ThreadView
} from '../../model';
import type { AnalystClient } from '../../transport/api';
import { mountedRoot } from '../dom';

const { host, root } = mountedRoot();

function change(id: string, fields: Partial<ChangeView> = {}): ChangeView {
  return {
    change_id: id,
    op: 'insert',
    cell_id: null,
    after: 'load',
    cell_type: 'code',
    source: 'x = 1',
    reason: 'a cell',
    run: null,
    status: 'pending',
    decided_by: null,
    diff: [],
    conflict: null,
    ...fields
  };
}

function proposal(id: string, changes: ChangeView[], notebook = 'work/study.ipynb'): ProposalView {
  return {
    proposal_id: id,
    turn_id: `turn_${id}`,
    notebook,
    created_at: '2026-12-04T12:00:00Z',
    failed: false,
    changes
  };
}

/** The server's answers, as `AnalystClient.request` returns them; each request recorded. */
function serverOf(answers: ProposalView[][]): { client: AnalystClient; asked: string[] } {
  const asked: string[] = [];
  const client = {
    request: async (path: string) => {
      asked.push(path);
      const proposals = answers[Math.min(asked.length, answers.length) - 1];
      return new Response(JSON.stringify({ proposals }), {
        headers: { 'Content-Type': 'application/json' }
      });
    }
  } as unknown as AnalystClient;
  return { client, asked };
}

async function mount(client: AnalystClient, calls: number, extra?: JSX.Element): Promise<void> {
  await act(async () => {
    root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <section className="jp-AnalystConversation">
          {extra}
          <PendingProposals threadId="thr_1" calls={calls} />
        </section>
      </AnalystContext.Provider>
    );
  });
}

describe('pending proposals', () => {
  it('keeps the proposals with pending changes, counting their conflicts', () => {
    const listed = pendingProposals([
      proposal('p1', [change('a', { status: 'accepted' })]),
      proposal('p2', [
        change('b'),
        change('c', { op: 'replace', cell_id: 'show', conflict: "cell 'show' was edited" })
      ])
    ]);
    expect(listed).toEqual([
      {
        proposalId: 'p2',
        turnId: 'turn_p2',
        notebook: 'work/study.ipynb',
        pending: 2,
        conflicts: 1,
        failed: false
      }
    ]);
    expect(pendingLabel(listed[0])).toBe('study.ipynb: 2 changes · 1 conflict');
    expect(pendingLabel({ ...listed[0], pending: 1, conflicts: 0, failed: true })).toBe(
      'study.ipynb: 1 change · failed in the sandbox'
    );
  });

  it('counts the propose_cells calls that have a result', () => {
    const tool = (name: string, result: unknown) => ({ kind: 'tool', tool: name, result });
    const view = {
      lastSeq: 3,
      artifacts: {},
      turns: [
        { items: [tool('run_sql', {}), tool('propose_cells', {}), tool('propose_cells', null)] }
      ]
    } as unknown as ThreadView;
    expect(proposalCalls(view)).toBe(1);
  });

  it('asks nothing and shows nothing while the thread made no proposal', async () => {
    const { client, asked } = serverOf([[proposal('p1', [change('a')])]]);
    await mount(client, 0);
    expect(asked).toEqual([]);
    expect(host().querySelector('nav')).toBeNull();
  });

  it('lists them, reads them again when a decision is said, and goes away when none is left', async () => {
    const { client, asked } = serverOf([
      [proposal('p1', [change('a'), change('b')])],
      [proposal('p1', [change('a', { status: 'accepted' }), change('b')])],
      [proposal('p1', [change('a', { status: 'accepted' }), change('b', { status: 'rejected' })])]
    ]);
    await mount(client, 1);
    const nav = host().querySelector('nav')!;
    expect(nav.getAttribute('aria-label')).toBe('Pending proposals');
    expect(nav.textContent).toBe('Proposals to review:study.ipynb: 2 changes');
    expect(asked).toEqual(['threads/thr_1/proposals']);
    await act(async () => proposalsChanged('thr_1'));
    expect(host().querySelector('.jp-AnalystPending-link')!.textContent).toBe(
      'study.ipynb: 1 change'
    );
    // Another thread's decision is not this one's.
    await act(async () => proposalsChanged('thr_2'));
    expect(asked).toHaveLength(2);
    await act(async () => proposalsChanged('thr_1'));
    expect(host().querySelector('nav')).toBeNull();
  });

  it('links to the proposal’s card, the keyboard on its first change', async () => {
    const { client } = serverOf([[proposal('p1', [change('a')])]]);
    const card = (
      <div className="jp-AnalystProposals" data-proposal-id="p1">
        <button type="button" className="jp-AnalystProposals-link">
          New cell a cell
        </button>
      </div>
    );
    await mount(client, 1, card);
    const scrolled: string[] = [];
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.className);
    };
    act(() => host().querySelector<HTMLButtonElement>('.jp-AnalystPending-link')!.click());
    expect(scrolled).toEqual(['jp-AnalystProposals']);
    expect(document.activeElement?.className).toBe('jp-AnalystProposals-link');
  });
});
