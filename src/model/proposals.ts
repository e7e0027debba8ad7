/**
 * Proposed cells as a person reviews them: the server's proposals (`GET threads/{id}/proposals`,
 * each change with nbdime's diff of its cell) read into what the notebook shows in place of
 * each change (a new cell, a replaced cell's source line by line, a deleted cell), and the
 * state of a review (the proposals, the decision under way, the last refusal) as a reducer.
 */

import type { components } from './api.generated';
import { PROPOSE_CELLS } from './tools/propose_cells';
import type { ThreadView } from './view';

export type ProposalView = components['schemas']['ProposalView'];
export type ChangeView = components['schemas']['ChangeView'];

/** One line of a replaced cell's source: kept, removed or added. */
export interface IDiffLine {
  kind: 'same' | 'del' | 'add';
  text: string;
}

/** One nbdime diff entry (its `op`: add, remove, replace, patch, addrange, removerange). */
interface IDiffEntry {
  op: string;
  key: string | number;
  value?: unknown;
  valuelist?: unknown;
  length?: number;
  diff?: IDiffEntry[];
}

/** A pending change as the notebook shows it beside the cell it concerns. */
export interface IChangeShown {
  proposalId: string;
  changeId: string;
  op: ChangeView['op'];
  /** The cell it replaces or deletes, or the cell a new one follows (`''`: the top). */
  anchor: string;
  cellType: ChangeView['cell_type'];
  reason: string;
  /** A new cell's source; a replaced cell's lines (kept, removed, added); a deleted cell's as removed. */
  lines: IDiffLine[];
  /** How its code ran in the sandbox: `ok`, `error`, or null (markdown, a deletion). */
  run: 'ok' | 'error' | null;
  /** The sandbox run's outputs as text (stream, error, text/plain), for a look before accepting. */
  outputs: string[];
  /** The cell was edited since the model read it: why it cannot be applied. */
  conflict: string | null;
  /**
   * Names its code reads that no notebook cell before it defines: they exist in the sandbox
   * (the conversation's datasets and variables), not in the user's kernel.
   */
  undefined: string[];
}

/** A proposal as the notebook and the panel show it: its pending changes and where it stands. */
export interface IProposalShown {
  proposalId: string;
  turnId: string;
  notebook: string;
  failed: boolean;
  pending: IChangeShown[];
  counts: Record<ChangeView['status'], number>;
}

/** `text` split into lines, each with its line end (as nbdime splits a source). */
export function splitLines(text: string): string[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g);
  return lines ?? [];
}

function entries(value: unknown): IDiffEntry[] {
  return Array.isArray(value)
    ? value.filter(
        (e): e is IDiffEntry =>
          typeof e === 'object' && e !== null && typeof (e as IDiffEntry).op === 'string'
      )
    : [];
}

/** nbdime's patch of a string (`addrange` of text, `removerange`) applied to `base`. */
export function patchText(base: string, diff: unknown): string {
  let out = '';
  let taken = 0;
  for (const entry of entries(diff)) {
    const key = Number(entry.key);
    out += base.slice(taken, key);
    taken = Math.max(taken, key);
    if (entry.op === 'addrange') {
      out += typeof entry.valuelist === 'string' ? entry.valuelist : '';
    } else if (entry.op === 'removerange') {
      taken = key + (entry.length ?? 0);
    }
  }
  return out + base.slice(taken);
}

/**
 * A replaced cell's source line by line, from nbdime's diff of its source (a patch of the
 * list of lines: `addrange` of lines, `removerange`, `patch` of one line's text) against the
 * cell's source as the notebook holds it. When the diff does not lead from `before` to
 * `after` (the notebook moved on), the whole of `before` removed and `after` added.
 */
export function sourceLines(before: string, sourceDiff: unknown, after: string): IDiffLine[] {
  const base = splitLines(before);
  const lines: IDiffLine[] = [];
  let taken = 0;
  const keep = (upTo: number): void => {
    for (; taken < upTo && taken < base.length; taken++) {
      lines.push({ kind: 'same', text: base[taken] });
    }
  };
  for (const entry of entries(sourceDiff)) {
    const key = Number(entry.key);
    keep(key);
    if (entry.op === 'addrange' && Array.isArray(entry.valuelist)) {
      for (const text of entry.valuelist) {
        lines.push({ kind: 'add', text: String(text) });
      }
    } else if (entry.op === 'removerange') {
      for (const text of base.slice(key, key + (entry.length ?? 0))) {
        lines.push({ kind: 'del', text });
      }
      taken = key + (entry.length ?? 0);
    } else if (entry.op === 'patch' && key < base.length) {
      lines.push({ kind: 'del', text: base[key] });
      lines.push({ kind: 'add', text: patchText(base[key], entry.diff) });
      taken = key + 1;
    }
  }
  keep(base.length);
  const made = lines
    .filter(l => l.kind !== 'del')
    .map(l => l.text)
    .join('');
  if (made !== after) {
    return [
      ...base.map(text => ({ kind: 'del' as const, text })),
      ...splitLines(after).map(text => ({ kind: 'add' as const, text }))
    ];
  }
  return lines.map(l => ({ ...l, text: l.text.replace(/\n$/, '') }));
}

/** The diff of a cell's source inside the change's nbdime diff (cells → 0 → source), if any. */
export function cellSourceDiff(diff: ChangeView['diff']): unknown {
  const cells = entries(diff).find(e => e.op === 'patch' && e.key === 'cells');
  const cell = entries(cells?.diff).find(e => e.op === 'patch');
  return entries(cell?.diff).find(e => e.op === 'patch' && e.key === 'source')?.diff ?? [];
}

/** A sandbox output as a few lines of text. */
export function outputText(output: Record<string, unknown>): string {
  const joined = (value: unknown): string =>
    Array.isArray(value) ? value.join('') : typeof value === 'string' ? value : '';
  if (output.output_type === 'stream') {
    return joined(output.text);
  }
  if (output.output_type === 'error') {
    return `${String(output.ename)}: ${String(output.evalue)}`;
  }
  const data = (output.data ?? {}) as Record<string, unknown>;
  if (data['image/png'] !== undefined) {
    return '[a figure]';
  }
  return joined(data['text/plain']);
}

/**
 * A pending change as the notebook shows it; `currentSource` is the source of the cell it
 * replaces or deletes as the notebook holds it now ('' for an insert).
 */
export function changeShown(
  proposal: ProposalView,
  change: ChangeView,
  currentSource: string
): IChangeShown {
  const asLines = (text: string, kind: IDiffLine['kind']): IDiffLine[] =>
    splitLines(text).map(t => ({ kind, text: t.replace(/\n$/, '') }));
  const lines =
    change.op === 'insert'
      ? asLines(change.source, 'add')
      : change.op === 'delete'
        ? asLines(currentSource, 'del')
        : sourceLines(currentSource, cellSourceDiff(change.diff), change.source);
  return {
    proposalId: proposal.proposal_id,
    changeId: change.change_id,
    op: change.op,
    anchor: (change.op === 'insert' ? change.after : change.cell_id) ?? '',
    cellType: change.cell_type,
    reason: change.reason,
    lines,
    run: change.run?.status ?? null,
    outputs: (change.run?.outputs ?? []).map(o => outputText(o)).filter(text => text.trim() !== ''),
    conflict: change.conflict,
    undefined: change.undefined ?? []
  };
}

/** A proposal as shown: its pending changes (their cells' sources as `sourceOf` reads them). */
export function proposalShown(
  proposal: ProposalView,
  sourceOf: (cellId: string) => string
): IProposalShown {
  const counts = { pending: 0, accepted: 0, rejected: 0, reverted: 0, withdrawn: 0 };
  for (const change of proposal.changes) {
    counts[change.status] += 1;
  }
  return {
    proposalId: proposal.proposal_id,
    turnId: proposal.turn_id,
    notebook: proposal.notebook,
    failed: proposal.failed,
    pending: proposal.changes
      .filter(c => c.status === 'pending')
      .map(c => changeShown(proposal, c, c.cell_id ? sourceOf(c.cell_id) : '')),
    counts
  };
}

/** What a person asked: accept or reject some changes (or all), or revert a turn. */
export type Decision =
  | { kind: 'accept' | 'reject'; proposalId: string; changeIds: string[] | 'all' }
  | { kind: 'revert'; turnId: string };

/** A review of a thread's proposals. */
export interface IReviewState {
  proposals: ProposalView[];
  /** The decision under way (its buttons are disabled), or null. */
  busy: Decision | null;
  /** The last refusal, as the server said it. */
  error: string | null;
}

export type ReviewAction =
  | { type: 'loaded'; proposals: ProposalView[] }
  | { type: 'deciding'; decision: Decision }
  | { type: 'decided'; proposal?: ProposalView }
  | { type: 'refused'; message: string };

export const EMPTY_REVIEW: IReviewState = { proposals: [], busy: null, error: null };

export function reviewReducer(state: IReviewState, action: ReviewAction): IReviewState {
  switch (action.type) {
    case 'loaded':
      return { ...state, proposals: action.proposals };
    case 'deciding':
      return { ...state, busy: action.decision, error: null };
    case 'decided': {
      const updated = action.proposal;
      const proposals = updated
        ? state.proposals.map(p => (p.proposal_id === updated.proposal_id ? updated : p))
        : state.proposals;
      return { proposals, busy: null, error: null };
    }
    case 'refused':
      return { ...state, busy: null, error: action.message };
  }
}

/** The turns with an accepted change, which Revert undoes. */
export function revertibleTurns(proposals: ProposalView[]): string[] {
  const turns = proposals
    .filter(p => p.changes.some(c => c.status === 'accepted'))
    .map(p => p.turn_id);
  return [...new Set(turns)];
}

/** A proposal with changes still to decide, as the panel's list of them says it. */
export interface IPendingProposal {
  proposalId: string;
  turnId: string;
  notebook: string;
  pending: number;
  /** Of its pending changes, those the server says no longer apply (the cell was edited). */
  conflicts: number;
  failed: boolean;
}

/** The proposals with pending changes, oldest first. */
export function pendingProposals(proposals: ProposalView[]): IPendingProposal[] {
  return proposals
    .map(p => {
      const pending = p.changes.filter(c => c.status === 'pending');
      return {
        proposalId: p.proposal_id,
        turnId: p.turn_id,
        notebook: p.notebook,
        pending: pending.length,
        conflicts: pending.filter(c => c.conflict !== null).length,
        failed: p.failed
      };
    })
    .filter(p => p.pending > 0);
}

/** How many `propose_cells` calls of the thread have a result: none, nothing to list. */
export function proposalCalls(view: ThreadView): number {
  let calls = 0;
  for (const turn of view.turns) {
    for (const item of turn.items) {
      if (item.kind === 'tool' && item.tool === PROPOSE_CELLS.tool && item.result !== null) {
        calls += 1;
      }
    }
  }
  return calls;
}

/**
 * What a change whose code reads names the notebook does not define says before it is
 * accepted, or null when it reads none.
 */
export function undefinedNote(change: IChangeShown): string | null {
  const names = change.undefined;
  if (names.length === 0) {
    return null;
  }
  const listed =
    names.slice(0, 5).join(', ') + (names.length > 5 ? `, and ${names.length - 5} more` : '');
  const them = names.length === 1 ? 'it' : 'them';
  return (
    `Uses ${listed}, which no cell above it defines: it ran in the analyst's sandbox, where ` +
    `${names.length === 1 ? 'it exists' : 'they exist'}; in your kernel it raises NameError ` +
    `until a cell before it defines ${them}.`
  );
}
