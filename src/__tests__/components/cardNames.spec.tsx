/**
 * Specs of what a card says to the person reading it: each fact once, in words. A refused
 * step says its refusal once under a heading in words and offers no cell; an unknown column
 * is named once; a traceback shows its last line, the whole on demand; a flagged answer
 * says its flags once; steps, figures and datasets go by names, their ids and fingerprints
 * behind "Details"; a "continue" folds each reused step to one line and says what ran in one.
 */

import * as React from 'react';

import { canInsert } from '../../components/StepActions';
import {
  artifactTitle,
  errorLines,
  stepNumbers,
  turnSummary,
  withStepNames
} from '../../components/cards/stepNames';
import { TurnList } from '../../components/TurnList';
import { errorHeading } from '../../model';
import { parseEvent, type AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView, type ThreadView } from '../../model/view';
import { demoTurn } from '../helpers';
import { renderStatic } from '../staticMarkup';

const demo = demoTurn();

/** Events of one turn `turn_x`, from their type-specific fields, numbered from `first`. */
function turnOf(first: number, bodies: Record<string, unknown>[]): AnalystEvent[] {
  return bodies.map((body, i) => {
    const event = parseEvent({
      seq: first + i,
      thread_id: 'thr_1',
      turn_id: `turn_${first}`,
      ts: '2026-11-23T21:00:00.000Z',
      ...body
    });
    if (event === null) {
      throw new Error(`not an event: ${JSON.stringify(body)}`);
    }
    return event;
  });
}

// What the SQL guard says of a DELETE (sql/prepare/guard.py), to the model.
const DELETE_MESSAGE = 'DELETE is not allowed: only queries (SELECT) may run';
const DELETE_HINT = "only one read-only SELECT over the source's tables is allowed";
const UNKNOWN_COLUMN = "Unknown column 'revenu' in table orders. Did you mean: revenue?";
const TRACEBACK = [
  'Cell In[3], line 2',
  "----> 2 df['revenu'].sum()",
  '[3 frames inside pandas not shown]',
  "KeyError: 'revenu'",
  "Hint: the DataFrame's columns (3): region, month, revenue"
].join('\n');

/** A turn with a refused DELETE, an unknown column, a Python error and a flagged answer. */
function troubled(): ThreadView {
  return reduceAll(
    initialThreadView(),
    turnOf(1, [
      { type: 'turn_started', prompt: 'clean up', model: 'm', rerun: false },
      { type: 'state', from_state: null, to_state: 'planning' },
      {
        type: 'guard',
        reason: 'invalid_arguments',
        message: `${DELETE_MESSAGE} (hint: ${DELETE_HINT})`,
        call_id: 'call_del'
      },
      {
        type: 'tool_result',
        call_id: 'call_del',
        tool: 'run_sql',
        status: 'refused',
        reused: false,
        result: {
          error: { reason: 'sql_not_read_only', message: DELETE_MESSAGE, hint: DELETE_HINT }
        },
        artifact_ids: [],
        duration_s: 0
      },
      {
        type: 'tool_call',
        call_id: 'call_col',
        tool: 'run_sql',
        arguments: { name: 'totals', sql: 'SELECT revenu FROM orders' },
        step_key: null
      },
      {
        type: 'guard',
        reason: 'unknown_name_refused',
        message: UNKNOWN_COLUMN,
        call_id: 'call_col'
      },
      {
        type: 'tool_result',
        call_id: 'call_col',
        tool: 'run_sql',
        status: 'error',
        reused: false,
        result: {
          error: {
            reason: 'unknown_column',
            message: UNKNOWN_COLUMN,
            suggestions: ['revenue'],
            hint: 'call describe_table to see the columns'
          }
        },
        artifact_ids: [],
        duration_s: 0.01
      },
      {
        type: 'tool_call',
        call_id: 'call_py',
        tool: 'run_python',
        arguments: { code: "# Total revenue\ndf['revenu'].sum()" },
        step_key: null
      },
      {
        type: 'tool_result',
        call_id: 'call_py',
        tool: 'run_python',
        status: 'error',
        reused: false,
        result: { stdout: '', error: { reason: 'python_error', message: TRACEBACK } },
        artifact_ids: [],
        duration_s: 0.2
      },
      {
        type: 'guard',
        reason: 'invented_name_flagged',
        message: 'the answer cites names that do not exist: sales_2024',
        call_id: null
      },
      { type: 'answer', text: 'See sales_2024.', flagged: ['sales_2024'] },
      {
        type: 'turn_ended',
        status: 'completed',
        message: null,
        counters: { executed: 1, blocked: 2 }
      }
    ])
  );
}

function count(text: string, part: string): number {
  return text.split(part).length - 1;
}

describe('a refused or failed step', () => {
  const host = renderStatic(<TurnList view={troubled()} threadId="thr_1" />);
  const card = (id: string): Element => host.querySelector(`[data-call-id="${id}"]`)!;

  it('says a refusal once, under a heading in words, and offers no cell', () => {
    const refused = card('call_del');
    expect(refused.getAttribute('data-status')).toBe('refused');
    expect(refused.querySelector('.jp-AnalystCard-errorReason')?.textContent).toBe(
      'Refused: the query would change data (only read-only queries run)'
    );
    // The guard, the error's message and its hint say the same fact: the heading says it once.
    expect(refused.querySelector('.jp-AnalystCard-error')?.textContent).toBe(
      'Refused: the query would change data (only read-only queries run)'
    );
    expect(refused.textContent).not.toContain(DELETE_MESSAGE);
    expect(refused.textContent).not.toContain(DELETE_HINT);
    expect(refused.querySelector('.jp-AnalystGuard')).toBeNull();
    expect(refused.textContent).not.toMatch(/sql not read only|sql_not_read_only/);
    expect(refused.querySelector('.jp-AnalystStepActions-insert')).toBeNull();
  });

  it('says "Refused", not "Failed", of a query the SQL guard refused (a correctable error)', () => {
    const view = troubled();
    const card = view.turns[0].items.find(i => i.kind === 'tool' && i.callId === 'call_del');
    const asError = { ...view };
    asError.turns = [
      {
        ...view.turns[0],
        items: view.turns[0].items.map(i => (i === card ? { ...i, status: 'error' as const } : i))
      }
    ];
    const shown = renderStatic(<TurnList view={asError} threadId="thr_1" />);
    const badge = shown.querySelector(
      '[data-call-id="call_del"] .jp-AnalystCard-header .jp-AnalystBadge'
    );
    expect(badge?.textContent).toBe('Refused');
    const failed = shown.querySelector(
      '[data-call-id="call_py"] .jp-AnalystCard-header .jp-AnalystBadge'
    );
    expect(failed?.textContent).toBe('Failed');
  });

  it('names an unknown column once, with its close name once', () => {
    const failed = card('call_col');
    const text = failed.textContent ?? '';
    expect(failed.querySelector('.jp-AnalystCard-errorReason')?.textContent).toBe('Unknown column');
    expect(count(text, "Unknown column 'revenu'")).toBe(1);
    expect(count(text, 'Did you mean')).toBe(1);
    expect(failed.querySelector('.jp-AnalystStepActions-insert')).toBeNull();
  });

  it("shows a traceback's last line, the whole one behind a toggle", () => {
    const python = card('call_py');
    expect(python.querySelector('.jp-AnalystCard-errorReason')?.textContent).toBe(
      'The Python code raised an error'
    );
    expect(python.querySelector('.jp-AnalystCard-errorMessage')?.textContent).toBe(
      "KeyError: 'revenu'\nHint: the DataFrame's columns (3): region, month, revenue"
    );
    const full = python.querySelector('details.jp-AnalystCard-traceback');
    expect(full?.hasAttribute('open')).toBe(false);
    expect(full?.querySelector('pre')?.textContent).toBe(TRACEBACK);
  });

  it('says once that the answer stated numbers no result holds', () => {
    // As the loop tells it (agent/loop.py), with the numbers named.
    const message = 'the answer states numbers no result holds: 1,204, 37%';
    const view = reduceAll(
      initialThreadView(),
      turnOf(1, [
        { type: 'turn_started', prompt: 'Who leads?', model: 'm', rerun: false },
        { type: 'guard', reason: 'unsupported_claim_flagged', message, call_id: null },
        { type: 'answer', text: 'North leads with 1,204, up 37%.', flagged: [] }
      ])
    );
    const host = renderStatic(<TurnList view={view} threadId="thr_1" />);
    const note = host.querySelector('[data-reason="unsupported_claim_flagged"]');
    expect(note?.textContent).toContain('1,204, 37%');
    expect(note?.textContent).toContain('the model was told once');
    expect(note?.textContent?.match(/numbers? no result holds/g)).toHaveLength(1);
  });

  it('says a flagged answer once', () => {
    expect(count(host.textContent ?? '', 'sales_2024')).toBe(2); // the answer, and its flag
    expect(host.querySelectorAll('[data-reason="invented_name_flagged"]')).toHaveLength(0);
    expect(host.querySelector('.jp-AnalystText-flagged')?.textContent).toContain('sales_2024');
  });

  it('names steps by number and purpose, their ids behind details', () => {
    const headers = [...host.querySelectorAll('.jp-AnalystCard-header')].map(h => h.textContent);
    expect(headers[0]).toMatch(/^Step 1 · SQL/);
    expect(headers[1]).toMatch(/^Step 2 · SQLtotals/);
    expect(headers[2]).toMatch(/^Step 3 · PythonTotal revenue/);
    for (const id of ['call_del', 'call_col', 'call_py']) {
      const details = card(id).querySelector('details.jp-AnalystDetails');
      expect(details?.hasAttribute('open')).toBe(false);
      expect(details?.textContent).toContain(id);
    }
  });

  it('counts the turn in one line', () => {
    expect(host.querySelector('.jp-AnalystTurn-summary')?.textContent).toBe(
      '1 step run, 2 refused'
    );
  });
});

describe('what a card calls things', () => {
  const view = reduceAll(initialThreadView(), demo);
  const host = renderStatic(<TurnList view={view} threadId="thr_1" />);

  it('shows no call id, fingerprint or intent note outside the details', () => {
    const shown = host.cloneNode(true) as HTMLElement;
    shown.querySelectorAll('details.jp-AnalystDetails').forEach(d => d.remove());
    const text = shown.textContent ?? '';
    expect(text).not.toMatch(/call_[0-9a-f]{6}/);
    expect(text).not.toMatch(/\b[0-9a-f]{12}\b/);
    expect(text).not.toContain('measures:');
    const chart = host.querySelector('[data-card="chart"] .jp-AnalystArtifact-name');
    expect(chart?.textContent).toBe('Figure 1 of step 3');
    const sqlDetails = host.querySelector(
      '[data-card="sql"] .jp-AnalystCard-body > details.jp-AnalystDetails'
    );
    expect(sqlDetails?.textContent).toContain('measures: revenue = SUM(o.revenue)');
    const dataset = host.querySelector('[data-card="artifact"][data-artifact-type="dataset"]');
    expect(dataset?.querySelector('.jp-AnalystDetails')?.textContent).toContain(
      'sha256:2fa44af1224da4c27647da8deae4b7e5a91cbd084eb40ffb7c37e50c70f0759f'
    );
  });

  it('names figures, steps and errors in words', () => {
    const numbers = stepNumbers(view.turns[0]);
    expect([...numbers.values()]).toEqual([1, 2, 3]);
    expect(artifactTitle('call_bd2af7481cda-figure-1.png', numbers)).toBe('Figure 1 of step 3');
    expect(artifactTitle('call_unknown1-figure-2.png', numbers)).toBe('Figure 2');
    expect(artifactTitle('Revenue.png', numbers)).toBe('Revenue.png');
    expect(withStepNames('run_sql call_82a65d016366: too few rows', numbers)).toBe(
      'run_sql step 2: too few rows'
    );
    expect(withStepNames('see call_ffffffffffff', numbers)).toBe('see an earlier step');
    expect(errorHeading('sql_not_read_only')).not.toMatch(/_/);
    expect(errorHeading('some_new_code')).toBe('Some new code');
    expect(errorHeading('plan_refused')).toBe(
      'Refused: the plan cannot run as given; nothing in it ran'
    );
    expect(errorLines('one line')).toEqual({ last: 'one line', full: null });
  });

  it('offers a cell only for a SQL or Python step that succeeded', () => {
    expect(canInsert('run_sql', 'ok')).toBe(true);
    expect(canInsert('run_python', 'ok')).toBe(true);
    for (const status of ['refused', 'error', 'pending', 'unfinished'] as const) {
      expect(canInsert('run_sql', status)).toBe(false);
    }
    expect(canInsert('list_tables', 'ok')).toBe(false);
    expect(host.querySelectorAll('.jp-AnalystStepActions-insert')).toHaveLength(2);
  });

  it('says what a turn ran in one line', () => {
    expect(turnSummary({ reused: 2 })).toBe('2 steps reused');
    expect(turnSummary({ executed: 1, reused: 2 })).toBe('1 step run, 2 reused');
    expect(turnSummary({ executed: 0 })).toBeNull();
  });
});

describe('a "continue" that reuses every step', () => {
  /** The demo turn asked again: each step reused and said so, as the server tells it. */
  function continued(): ThreadView {
    const first = reduceAll(initialThreadView(), demo);
    const last = demo[demo.length - 1].seq;
    const again: AnalystEvent[] = [];
    for (const e of demo.filter(e => e.type !== 'artifact')) {
      const seq = last + again.length + 1;
      if (e.type === 'tool_result') {
        again.push(
          ...turnOf(seq, [
            {
              type: 'guard',
              reason: 'duplicate_tool_call_skipped',
              message: `identical ${e.tool} step already done; its recorded result is returned`,
              call_id: e.call_id
            }
          ]).map(g => ({ ...g, turn_id: 'turn_again' }))
        );
      }
      const moved = { ...e, seq: last + again.length + 1, turn_id: 'turn_again' };
      again.push(
        (moved.type === 'tool_result'
          ? { ...moved, reused: true, duration_s: 0 }
          : moved.type === 'turn_ended'
            ? { ...moved, counters: { reused: 3 } }
            : moved) as AnalystEvent
      );
    }
    return reduceAll(first, again);
  }

  it('folds each reused step to one line and says the turn in one', () => {
    const host = renderStatic(<TurnList view={continued()} threadId="thr_1" />);
    const second = host.querySelectorAll('.jp-AnalystTurn')[1];
    const steps = second.querySelectorAll('[data-card="sql"], [data-card="python"]');
    expect(steps).toHaveLength(2);
    steps.forEach(step => {
      const folded = step.querySelector(':scope > details.jp-AnalystCard-reusedStep');
      expect(folded?.hasAttribute('open')).toBe(false);
      const header = folded?.querySelector(':scope > summary .jp-AnalystCard-header');
      expect(header?.querySelectorAll('.jp-AnalystBadge')).toHaveLength(1);
      expect(header?.textContent).toContain('reused');
      expect(header?.textContent).not.toContain('Done');
      expect(step.textContent).not.toContain('skipped: the same step already ran');
    });
    expect(second.querySelector('.jp-AnalystTurn-summary')?.textContent).toBe('3 steps reused');
  });
});
