/**
 * Proposals read for review: nbdime's diffs (as the server sends them, made by nbdime from a
 * real cell) become the lines the notebook shows, and the review's reducer.
 */

import {
  changeShown,
  EMPTY_REVIEW,
  patchText,
  proposalShown,
  revertibleTurns,
  reviewReducer,
  sourceLines,
  undefinedNote,
  type ChangeView,
  type ProposalView
} from '../../model';

/** nbdime's diff_notebooks of the cell `y = 2\nprint(y)` replaced by `y = 3\nprint(y)\nz=1`. */
const REPLACE_DIFF = [
  {
    op: 'patch',
    key: 'cells',
    diff: [
      {
        op: 'patch',
        key: 0,
        diff: [
          {
            op: 'patch',
            key: 'source',
            diff: [
              {
                op: 'patch',
                key: 0,
                diff: [
                  { op: 'addrange', key: 4, valuelist: '3' },
                  { op: 'removerange', key: 4, length: 1 }
                ]
              },
              { op: 'patch', key: 1, diff: [{ op: 'addrange', key: 8, valuelist: '\n' }] },
              { op: 'addrange', key: 2, valuelist: ['z=1'] }
            ]
          }
        ]
      }
    ]
  }
];

function change(fields: Partial<ChangeView>): ChangeView {
  return {
    change_id: 'c2',
    op: 'replace',
    cell_id: 'c2',
    after: null,
    cell_type: 'code',
    source: 'y = 3\nprint(y)\nz=1',
    reason: 'print y',
    run: null,
    status: 'pending',
    decided_by: null,
    diff: REPLACE_DIFF,
    conflict: null,
    ...fields
  };
}

function proposal(changes: ChangeView[], failed = false): ProposalView {
  return {
    proposal_id: 'prop_1',
    turn_id: 'turn_1',
    notebook: 'study.ipynb',
    created_at: '2026-12-04T12:00:00Z',
    failed,
    changes
  };
}

describe('nbdime diffs as lines', () => {
  it('patches a line of text', () => {
    expect(
      patchText('y = 2\n', [
        { op: 'addrange', key: 4, valuelist: '3' },
        { op: 'removerange', key: 4, length: 1 }
      ])
    ).toBe('y = 3\n');
  });

  it('shows a replaced source line by line: kept, removed, added', () => {
    const lines = sourceLines(
      'y = 2\nprint(y)\nkeep',
      [
        {
          op: 'patch',
          key: 0,
          diff: [
            { op: 'addrange', key: 4, valuelist: '3' },
            { op: 'removerange', key: 4, length: 1 }
          ]
        }
      ],
      'y = 3\nprint(y)\nkeep'
    );
    expect(lines).toEqual([
      { kind: 'del', text: 'y = 2' },
      { kind: 'add', text: 'y = 3' },
      { kind: 'same', text: 'print(y)' },
      { kind: 'same', text: 'keep' }
    ]);
  });

  it('reads the source diff inside the cell diff the server sends', () => {
    const shown = changeShown(proposal([change({})]), change({}), 'y = 2\nprint(y)');
    expect(shown.lines).toEqual([
      { kind: 'del', text: 'y = 2' },
      { kind: 'add', text: 'y = 3' },
      { kind: 'del', text: 'print(y)' },
      { kind: 'add', text: 'print(y)' },
      { kind: 'add', text: 'z=1' }
    ]);
    expect(shown.anchor).toBe('c2');
  });

  it('shows the whole cell replaced when the diff no longer leads to the proposed source', () => {
    const lines = sourceLines('edited = 1', [{ op: 'removerange', key: 0, length: 1 }], 'y = 3');
    expect(lines).toEqual([
      { kind: 'del', text: 'edited = 1' },
      { kind: 'add', text: 'y = 3' }
    ]);
  });

  it('shows a new cell as added lines after its anchor, with its sandbox outputs', () => {
    const insert = change({
      change_id: 'n1',
      op: 'insert',
      cell_id: null,
      after: 'c1',
      source: 'total = 42\nprint(total)',
      diff: [],
      run: {
        status: 'ok',
        outputs: [{ output_type: 'stream', name: 'stdout', text: ['total is 42\n'] }]
      }
    });
    const shown = changeShown(proposal([insert]), insert, '');
    expect(shown.anchor).toBe('c1');
    expect(shown.lines.map(l => l.kind)).toEqual(['add', 'add']);
    expect(shown.outputs).toEqual(['total is 42\n']);
    expect(shown.run).toBe('ok');
  });

  it('shows a deleted cell as removed lines and a failed run as its error', () => {
    const gone = change({ op: 'delete', change_id: 'c2', source: '', diff: [] });
    expect(changeShown(proposal([gone]), gone, 'y = 2').lines).toEqual([
      { kind: 'del', text: 'y = 2' }
    ]);
    const failing = change({
      op: 'insert',
      after: 'c1',
      change_id: 'n2',
      source: "raise ValueError('boom')",
      run: {
        status: 'error',
        outputs: [{ output_type: 'error', ename: 'ValueError', evalue: 'boom', traceback: [] }]
      }
    });
    const shown = changeShown(proposal([failing], true), failing, '');
    expect(shown.run).toBe('error');
    expect(shown.outputs).toEqual(['ValueError: boom']);
  });

  it('lists only pending changes and counts every status', () => {
    const shown = proposalShown(
      proposal([change({}), change({ change_id: 'n1', op: 'insert', status: 'accepted' })]),
      () => 'y = 2\nprint(y)'
    );
    expect(shown.pending.map(c => c.changeId)).toEqual(['c2']);
    expect(shown.counts).toEqual({
      pending: 1,
      accepted: 1,
      rejected: 0,
      reverted: 0,
      withdrawn: 0
    });
  });

  it('counts a change the model withdrew, which is no longer pending', () => {
    const shown = proposalShown(
      proposal([change({ status: 'withdrawn', decided_by: 'model' })]),
      () => 'y = 2\nprint(y)'
    );
    expect(shown.pending).toEqual([]);
    expect(shown.counts.withdrawn).toBe(1);
  });
});

describe('the review reducer', () => {
  it('loads, decides and keeps the proposal the server answers', () => {
    const before = proposal([change({})]);
    let state = reviewReducer(EMPTY_REVIEW, { type: 'loaded', proposals: [before] });
    state = reviewReducer(state, {
      type: 'deciding',
      decision: { kind: 'accept', proposalId: 'prop_1', changeIds: ['c2'] }
    });
    expect(state.busy).not.toBeNull();
    const after = proposal([change({ status: 'accepted' })]);
    state = reviewReducer(state, { type: 'decided', proposal: after });
    expect(state.busy).toBeNull();
    expect(state.proposals[0].changes[0].status).toBe('accepted');
    expect(revertibleTurns(state.proposals)).toEqual(['turn_1']);
  });

  it('keeps a refusal and frees the buttons', () => {
    const state = reviewReducer(
      { ...EMPTY_REVIEW, busy: { kind: 'revert', turnId: 'turn_1' } },
      { type: 'refused', message: 'nothing of the turn was accepted' }
    );
    expect(state).toEqual({
      proposals: [],
      busy: null,
      error: 'nothing of the turn was accepted'
    });
    expect(revertibleTurns([proposal([change({})])])).toEqual([]);
  });
});

describe('names a proposed cell reads that the notebook does not define', () => {
  it('are carried from the server and said before accepting', () => {
    const none = changeShown(proposal([change({})]), change({}), 'y = 2\nprint(y)');
    expect(none.undefined).toEqual([]);
    expect(undefinedNote(none)).toBeNull();
    const one = changeShown(proposal([]), change({ undefined: ['rev'] }), 'y = 2\nprint(y)');
    expect(undefinedNote(one)).toBe(
      "Uses rev, which no cell above it defines: it ran in the analyst's sandbox, where it " +
        'exists; in your kernel it raises NameError until a cell before it defines it.'
    );
  });

  it('lists five and counts the rest', () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const many = changeShown(proposal([]), change({ undefined: names }), 'y = 2\nprint(y)');
    const note = undefinedNote(many)!;
    expect(note).toContain('Uses a, b, c, d, e, and 2 more, which no cell above it defines');
    expect(note).toContain('where they exist');
    expect(note).toContain('defines them.');
  });
});
