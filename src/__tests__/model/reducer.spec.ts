import {
  parseEvent,
  type AnalystEvent,
  type ContextUsage,
  type EventBase,
  type TurnEndStatus
} from '../../model/events';
import { TURN_END_LABEL } from '../../model/reasons';
import { reduce, reduceAll } from '../../model/reducer';
import {
  activeTurn,
  findCard,
  initialThreadView,
  type ToolCard,
  type ThreadView
} from '../../model/view';
import { readResult } from '../../model/results';
import type { RunPythonView, RunSqlView } from '../../model/tools';
import { deepFreeze, demoTurn } from '../helpers';

type Without<E> = E extends AnalystEvent ? Omit<E, keyof EventBase> : never;

/** Events of one made-up turn, numbered in the order they are made. */
function turnOf(turnId: string, firstSeq = 1): (body: Without<AnalystEvent>) => AnalystEvent {
  let seq = firstSeq - 1;
  return body => {
    seq += 1;
    return {
      ...body,
      seq,
      thread_id: 'thr_t',
      turn_id: turnId,
      ts: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`
    } as AnalystEvent;
  };
}

function card(view: ThreadView, callId: string): ToolCard {
  const found = findCard(view, callId);
  if (found === null) {
    throw new Error(`no card for ${callId}`);
  }
  return found;
}

describe('reduce: a real turn of the scripted demo', () => {
  const events = demoTurn();
  const view = reduceAll(initialThreadView(), events);
  const [turn] = view.turns;

  it('makes one turn with its prompt, model, state strip and end', () => {
    expect(view.turns).toHaveLength(1);
    expect(view.lastSeq).toBe(28);
    expect(turn.prompt).toBe('Revenue by region per month, with a chart');
    expect(turn.model).toBe('jupyter-analyst-scripted');
    expect(turn.states.map(s => s.state)).toEqual([
      'planning',
      'data_fetching',
      'analyzing',
      'presenting',
      'completed'
    ]);
    expect(turn.states[0].from).toBeNull();
    expect(turn.states.every(s => s.at.startsWith('2026-'))).toBe(true);
    expect(turn.state).toBe('completed');
    expect(turn.status).toBe('completed');
    expect(turn.end).toMatchObject({ status: 'completed', message: null, seq: 27 });
    expect(turn.counters).toEqual({ executed: 3 });
    expect(activeTurn(view)).toBeNull();
  });

  it('lays out text, one card per call, then the text and the answer, in order', () => {
    expect(turn.items.map(i => (i.kind === 'tool' ? `tool:${i.tool}` : i.kind))).toEqual([
      'text',
      'tool:list_tables',
      'tool:run_sql',
      'tool:run_python',
      'text',
      'answer'
    ]);
    const first = turn.items[0];
    expect(first).toMatchObject({
      kind: 'text',
      text: 'Let me look at the tables first.',
      firstSeq: 4,
      lastSeq: 6,
      modelCall: 1
    });
    const answer = turn.items[5];
    expect(answer.kind === 'answer' && answer.text).toBe(
      turn.items[4].kind === 'text' && turn.items[4].text
    );
    expect(answer).toMatchObject({ flagged: [] });
  });

  it('shows the SQL card: its query, dataset, rows, columns, preview and the dataset it created', () => {
    const sql = turn.items[2] as ToolCard;
    expect(sql.status).toBe('ok');
    expect(sql.sql).toContain('DATE_TRUNC');
    expect(sql.datasetName).toBe('revenue_by_region');
    expect(sql.stepKey).toMatch(/^step:/);
    expect(sql.reused).toBe(false);
    expect(sql.durationS).toBeGreaterThan(0);
    expect(sql.modelCall).toBe(2);
    expect(sql.result?.view).toMatchObject({
      dataset: 'revenue_by_region',
      rows: 60,
      columns: [
        { name: 'region', type: 'VARCHAR' },
        { name: 'month', type: 'TIMESTAMP' },
        { name: 'revenue', type: 'DOUBLE' }
      ],
      truncated: false
    });
    expect((sql.result?.view as RunSqlView).sample).toHaveLength(5);
    expect(sql.artifacts.map(a => [a.name, a.artifactType, a.created])).toEqual([
      ['revenue_by_region', 'dataset', true]
    ]);
    expect(sql.artifacts[0].shortFingerprint).toBe('2fa44af1224d');
    expect(sql.artifactIds).toEqual([sql.artifacts[0].artifactId]);
  });

  it('shows the Python card: its code, stdout and the chart and file it made', () => {
    const py = turn.items[3] as ToolCard;
    expect(py.code).toContain('plt.show()');
    expect((py.result?.view as RunPythonView).stdout).toContain('Central');
    expect(py.artifacts.map(a => a.artifactType)).toEqual(['image', 'file']);
    expect(py.artifactIds).toEqual(py.artifacts.map(a => a.artifactId));
    expect(Object.keys(view.artifacts)).toHaveLength(3);
  });

  it('keeps the context usage of each model call, for the hover', () => {
    expect(turn.context.map(c => [c.call, c.tokens, c.budget])).toEqual([
      [1, 507, 16000],
      [2, 621, 16000],
      [3, 1239, 16000],
      [4, 1650, 16000]
    ]);
    expect(turn.context[0].parts).toMatchObject({ rules: 450 });
    expect((turn.items[4] as { modelCall: number }).modelCall).toBe(4);
  });

  it('notes the summarizer memory update that came after the turn ended', () => {
    expect(turn.memory).toEqual([
      expect.objectContaining({ status: 'applied', version: 6, seq: 28 })
    ]);
  });

  it('is pure: frozen inputs are never changed, and each step is a new view', () => {
    const frozen = deepFreeze(demoTurn());
    let state = deepFreeze(initialThreadView());
    for (const event of frozen) {
      const before = JSON.stringify(state);
      const next = reduce(state, event);
      expect(JSON.stringify(state)).toBe(before);
      expect(next).not.toBe(state);
      state = deepFreeze(next);
    }
    expect(state).toEqual(view);
  });

  it('ignores an event already applied, returning the same view', () => {
    for (const event of events) {
      expect(reduce(view, event)).toBe(view);
    }
  });

  it('keeps what earlier steps rendered unchanged (same objects), so only new parts re-render', () => {
    const upTo13 = reduceAll(initialThreadView(), events.slice(0, 13));
    const upTo14 = reduce(upTo13, events[13]);
    expect(upTo14.turns[0].items[1]).toBe(upTo13.turns[0].items[1]);
    expect(upTo14.turns[0].items[2]).toBe(upTo13.turns[0].items[2]);
  });
});

describe('reduce: each event type', () => {
  it('turn_started opens a running turn', () => {
    const e = turnOf('turn_a');
    const view = reduce(
      initialThreadView(),
      e({ type: 'turn_started', prompt: 'why?', model: 'm', rerun: true })
    );
    expect(view.turns[0]).toMatchObject({
      turnId: 'turn_a',
      prompt: 'why?',
      model: 'm',
      rerun: true,
      status: 'running',
      state: null
    });
    expect(activeTurn(view)?.turnId).toBe('turn_a');
  });

  it('state moves the strip on, with when each state was entered', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e({ type: 'state', from_state: null, to_state: 'planning' }),
      e({ type: 'state', from_state: 'planning', to_state: 'error' })
    ]);
    expect(view.turns[0].states).toEqual([
      { state: 'planning', from: null, at: '2026-01-01T00:00:01.000Z', seq: 1 },
      { state: 'error', from: 'planning', at: '2026-01-01T00:00:02.000Z', seq: 2 }
    ]);
    expect(view.turns[0].state).toBe('error');
  });

  it('text_delta pieces join into one block until something else comes between', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e({ type: 'text_delta', text: 'Hel' }),
      e({ type: 'text_delta', text: 'lo' }),
      e({ type: 'tool_call', call_id: 'c1', tool: 'list_tables', arguments: {}, step_key: null }),
      e({ type: 'text_delta', text: 'again' })
    ]);
    expect(view.turns[0].items.map(i => (i.kind === 'text' ? i.text : i.kind))).toEqual([
      'Hello',
      'tool',
      'again'
    ]);
  });

  it('tool_call opens a pending card with its arguments; tool_result fills it', () => {
    const e = turnOf('turn_a');
    const started = reduce(
      initialThreadView(),
      e({
        type: 'tool_call',
        call_id: 'c1',
        tool: 'run_python',
        arguments: { code: 'print(1)' },
        step_key: 'step:1'
      })
    );
    expect(card(started, 'c1')).toMatchObject({
      status: 'pending',
      tool: 'run_python',
      code: 'print(1)',
      stepKey: 'step:1',
      result: null,
      durationS: null
    });
    const done = reduce(
      started,
      e({
        type: 'tool_result',
        call_id: 'c1',
        tool: 'run_python',
        status: 'error',
        reused: false,
        duration_s: 0.5,
        artifact_ids: [],
        result: {
          stdout: 'partial',
          error: { reason: 'python_error', message: 'ZeroDivisionError: division by zero' }
        }
      })
    );
    const c = card(done, 'c1');
    expect(c.status).toBe('error');
    expect(c.durationS).toBe(0.5);
    expect(c.result?.error).toEqual({
      reason: 'python_error',
      message: 'ZeroDivisionError: division by zero'
    });
    expect(c.result?.view).toMatchObject({ stdout: 'partial' });
    expect(done.turns[0].items).toHaveLength(1);
  });

  const art = (
    id: string,
    created: boolean,
    callId: string | null = null
  ): Without<AnalystEvent> => ({
    type: 'artifact',
    artifact_id: id,
    name: `n_${id}`,
    artifact_type: 'dataset',
    fingerprint: `sha256:${'ab'.repeat(32)}`,
    created,
    call_id: callId
  });

  it('artifact goes on the card of the call that recorded it, even while others run (a plan)', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e({
        type: 'tool_call',
        call_id: 'p.q1',
        tool: 'run_sql',
        arguments: { name: 'a', sql: 'SELECT 1' },
        step_key: 'k1'
      }),
      e({
        type: 'tool_call',
        call_id: 'p.q2',
        tool: 'run_sql',
        arguments: { name: 'b', sql: 'SELECT 2' },
        step_key: 'k2'
      }),
      e(art('a1', true, 'p.q1')),
      e({
        type: 'tool_result',
        call_id: 'p.q1',
        tool: 'run_sql',
        status: 'ok',
        reused: false,
        duration_s: 1,
        artifact_ids: ['a1'],
        result: {}
      }),
      e(art('a2', true, 'p.q2'))
    ]);
    expect(card(view, 'p.q1').artifacts.map(a => a.artifactId)).toEqual(['a1']);
    expect(card(view, 'p.q2').artifacts.map(a => a.artifactId)).toEqual(['a2']);
    expect(view.turns[0].items.map(i => i.kind)).toEqual(['tool', 'tool']);
  });

  it('artifact without its call (an older server) goes on the card of the call that is running, or stands alone', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e(art('a0', true)),
      e({
        type: 'tool_call',
        call_id: 'c1',
        tool: 'run_sql',
        arguments: { name: 'x', sql: 'SELECT 1' },
        step_key: 'k'
      }),
      e(art('a1', false)),
      e({
        type: 'tool_result',
        call_id: 'c1',
        tool: 'run_sql',
        status: 'ok',
        reused: true,
        duration_s: 0,
        artifact_ids: ['a1'],
        result: { dataset: 'x' }
      }),
      e(art('a2', true))
    ]);
    const items = view.turns[0].items;
    expect(items.map(i => i.kind)).toEqual(['artifact', 'tool', 'artifact']);
    expect(card(view, 'c1').artifacts).toEqual([
      expect.objectContaining({
        artifactId: 'a1',
        created: false,
        shortFingerprint: 'abababababab'
      })
    ]);
    expect(card(view, 'c1').reused).toBe(true);
    expect(Object.keys(view.artifacts).sort()).toEqual(['a0', 'a1', 'a2']);
  });

  it('guard about a call goes on its card, even before the call exists; one about no call is a notice', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e({
        type: 'guard',
        reason: 'invalid_state',
        message: 'run_python may not run now',
        call_id: 'c9'
      }),
      e({
        type: 'tool_result',
        call_id: 'c9',
        tool: 'run_python',
        status: 'refused',
        reused: false,
        duration_s: 0,
        artifact_ids: [],
        result: { error: { reason: 'invalid_state', message: 'run_python may not run now' } }
      }),
      e({ type: 'guard', reason: 'step_limit_reached', message: 'too many steps', call_id: null })
    ]);
    const refused = card(view, 'c9');
    expect(refused).toMatchObject({ tool: 'run_python', status: 'refused', startedAt: null });
    expect(refused.guards).toEqual([
      expect.objectContaining({
        reason: 'invalid_state',
        text: 'refused: this step cannot run at this point of the turn'
      })
    ]);
    expect(refused.result?.view).toBeNull();
    expect(refused.result?.error?.reason).toBe('invalid_state');
    const notice = view.turns[0].items[1];
    expect(notice).toMatchObject({
      kind: 'guard',
      reason: 'step_limit_reached',
      callId: null,
      text: 'stopped: the turn reached its limit of steps'
    });
    expect(view.turns[0].counters).toEqual({ invalid_state: 1, step_limit_reached: 1 });
  });

  it('the answer check: the draft sent back to the model is no card; the answer after it is', () => {
    const e = turnOf('turn_a');
    const draft = 'North leads with 1,204.';
    const final = 'North leads with 1,204 (unchecked).';
    const view = reduceAll(initialThreadView(), [
      e({ type: 'turn_started', prompt: 'Who leads?', model: 'm', rerun: false }),
      e({ type: 'text_delta', text: 'North leads ' }),
      e({ type: 'text_delta', text: 'with 1,204.' }),
      e({
        type: 'guard',
        reason: 'unsupported_claim_flagged',
        message: 'the answer states numbers no result holds: 1,204',
        call_id: null
      }),
      e({ type: 'text_delta', text: final }),
      e({ type: 'answer', text: final, flagged: [] })
    ]);
    const items = view.turns[0].items;
    expect(items.map(i => i.kind)).toEqual(['guard', 'text', 'answer']);
    expect(items.some(i => i.kind === 'text' && i.text === draft)).toBe(false);
    expect(items[1]).toMatchObject({ kind: 'text', text: final });
    expect(view.turns[0].counters).toEqual({ unsupported_claim_flagged: 1 });
  });

  it('a reused step: the skip guard, the reused artifacts and the reused result all show on the card', () => {
    const e = turnOf('turn_b');
    const view = reduceAll(initialThreadView(), [
      e({
        type: 'tool_call',
        call_id: 'c2',
        tool: 'run_sql',
        arguments: { name: 'revenue_by_region', sql: 'SELECT 1' },
        step_key: 'step:1'
      }),
      e({
        type: 'guard',
        reason: 'duplicate_tool_call_skipped',
        message: 'identical run_sql step already done',
        call_id: 'c2'
      }),
      e({
        type: 'artifact',
        artifact_id: 'art_1',
        name: 'revenue_by_region',
        artifact_type: 'dataset',
        fingerprint: 'sha256:2fa44af1224da4c2',
        created: false,
        call_id: 'c2'
      }),
      e({
        type: 'tool_result',
        call_id: 'c2',
        tool: 'run_sql',
        status: 'ok',
        reused: true,
        duration_s: 0,
        artifact_ids: ['art_1'],
        result: { dataset: 'revenue_by_region', rows: 60, reused: true }
      })
    ]);
    const c = card(view, 'c2');
    expect(c).toMatchObject({ reused: true, durationS: 0, status: 'ok' });
    expect(c.guards.map(g => g.text)).toEqual(['skipped: the same step already ran']);
    expect(c.artifacts.map(a => a.created)).toEqual([false]);
    expect(view.turns[0].items).toHaveLength(1);
  });

  it('answer is the final answer, with the names it cites that do not exist', () => {
    const e = turnOf('turn_a');
    const view = reduce(
      initialThreadView(),
      e({ type: 'answer', text: 'See art_x.', flagged: ['art_x'] })
    );
    expect(view.turns[0].items).toEqual([
      {
        kind: 'answer',
        text: 'See art_x.',
        flagged: ['art_x'],
        at: '2026-01-01T00:00:01.000Z',
        seq: 1
      }
    ]);
  });

  it('a turn that ends with a question waits for the answer (needs_input)', () => {
    const e = turnOf('turn_q');
    const view = reduceAll(initialThreadView(), [
      e({ type: 'turn_started', prompt: 'show revenue', model: 'm', rerun: false }),
      e({ type: 'answer', text: 'Which revenue do you mean?', flagged: [] }),
      e({
        type: 'turn_ended',
        status: 'needs_input',
        message: null,
        counters: {},
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      })
    ]);
    const [turn] = view.turns;
    expect(turn.status).toBe('needs_input');
    expect(turn.end).toMatchObject({ status: 'needs_input', seq: 3 });
    expect(TURN_END_LABEL[turn.status as TurnEndStatus]).toBe('Waiting for your answer');
  });

  it('turn_ended stops the turn; a call that had no result by then is unfinished', () => {
    const e = turnOf('turn_a');
    const view = reduceAll(initialThreadView(), [
      e({ type: 'turn_started', prompt: 'p', model: 'm', rerun: false }),
      e({
        type: 'tool_call',
        call_id: 'c1',
        tool: 'run_python',
        arguments: { code: 'import time; time.sleep(60)' },
        step_key: 'k'
      }),
      e({
        type: 'turn_ended',
        status: 'interrupted',
        message: 'cancelled by the user',
        counters: { executed: 1 },
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      })
    ]);
    const [turn] = view.turns;
    expect(turn.status).toBe('interrupted');
    expect(turn.end).toMatchObject({
      status: 'interrupted',
      message: 'cancelled by the user',
      seq: 3
    });
    expect(turn.counters).toEqual({ executed: 1 });
    expect(card(view, 'c1').status).toBe('unfinished');
    expect(activeTurn(view)).toBeNull();
  });

  it('context_usage is kept per model call, and what the call writes points back to it', () => {
    const e = turnOf('turn_a');
    const usage = {
      tokens: 10,
      budget: 100,
      parts: { rules: 5, current: 5 },
      messages: 2,
      turns: [1],
      dropped_turns: 0,
      summarized_through: 0,
      assembly_ms: 1.5,
      prompt_tokens: null,
      completion_tokens: null
    };
    const view = reduceAll(initialThreadView(), [
      e({ type: 'context_usage', call: 1, ...usage }),
      e({ type: 'text_delta', text: 'a' }),
      e({ type: 'context_usage', call: 2, ...usage, tokens: 20 }),
      e({ type: 'tool_call', call_id: 'c1', tool: 'list_tables', arguments: {}, step_key: null })
    ]);
    const [turn] = view.turns;
    expect(turn.context.map(c => [c.call, c.tokens, c.droppedTurns, c.assemblyMs])).toEqual([
      [1, 10, 0, 1.5],
      [2, 20, 0, 1.5]
    ]);
    expect(
      turn.items.map(i => (i.kind === 'text' || i.kind === 'tool' ? i.modelCall : null))
    ).toEqual([1, 2]);
  });

  it('context_usage: the counts the model server gave, told once the reply is in, sit beside the estimate', () => {
    const e = turnOf('turn_a');
    const estimate: Omit<ContextUsage, keyof EventBase | 'type'> = {
      call: 1,
      tokens: 640,
      budget: 16000,
      parts: { rules: 600, current: 40 },
      messages: 2,
      turns: [],
      dropped_turns: 0,
      summarized_through: 0,
      assembly_ms: 1,
      prompt_tokens: null,
      completion_tokens: null
    };
    const before = reduce(initialThreadView(), e({ type: 'context_usage', ...estimate }));
    expect(before.turns[0].context).toEqual([
      expect.objectContaining({ call: 1, tokens: 640, promptTokens: null, completionTokens: null })
    ]);
    const counted = reduceAll(before, [
      e({ type: 'text_delta', text: 'Done.' }),
      e({ type: 'context_usage', ...estimate, prompt_tokens: 1234, completion_tokens: 56 })
    ]);
    // One record per call: the estimate made before the call, and what the server counted.
    expect(counted.turns[0].context).toEqual([
      expect.objectContaining({ call: 1, tokens: 640, promptTokens: 1234, completionTokens: 56 })
    ]);
    expect((counted.turns[0].items[0] as { modelCall: number }).modelCall).toBe(1);
  });

  it('thinking shows from when the model began to think until its text, a call or the end', () => {
    const e = turnOf('turn_a');
    const usage = (call: number, counted: number | null): Without<ContextUsage> => ({
      type: 'context_usage',
      call,
      tokens: 10,
      budget: 100,
      parts: {},
      messages: 1,
      turns: [],
      dropped_turns: 0,
      summarized_through: 0,
      assembly_ms: 1,
      prompt_tokens: counted,
      completion_tokens: counted
    });
    const events = [
      e({ type: 'turn_started', prompt: 'why?', model: 'm', rerun: false }), // 1
      e(usage(1, null)), // 2
      e({ type: 'thinking' }), // 3
      e({ type: 'text_delta', text: 'Let me look.' }), // 4
      e(usage(1, 9)), // 5
      e({ type: 'tool_call', call_id: 'c1', tool: 'list_tables', arguments: {}, step_key: null }),
      e({
        type: 'tool_result',
        call_id: 'c1',
        tool: 'list_tables',
        status: 'ok',
        reused: false,
        result: {},
        artifact_ids: [],
        duration_s: 0.1
      }), // 7
      e(usage(2, null)), // 8
      e({ type: 'thinking' }), // 9
      e({
        type: 'memory',
        origin: 'summarizer',
        status: 'applied',
        version: 2,
        changes: {},
        summarized_through: 0,
        message: null,
        usage: null
      }), // 10
      e(usage(2, 9)), // 11: the reply is in
      e(usage(3, null)), // 12
      e({ type: 'thinking' }), // 13
      e({
        type: 'turn_ended',
        status: 'interrupted',
        message: null,
        counters: {},
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      }) // 14
    ];
    const thinkingAfter = (count: number) =>
      reduceAll(deepFreeze(initialThreadView()), deepFreeze(events.slice(0, count))).turns[0]
        .thinking;
    expect(thinkingAfter(2)).toBeNull();
    expect(thinkingAfter(3)).toEqual({
      since: '2026-01-01T00:00:03.000Z',
      modelCall: 1,
      seq: 3
    });
    expect(thinkingAfter(4)).toBeNull(); // its text
    expect(thinkingAfter(9)).toEqual({ since: '2026-01-01T00:00:09.000Z', modelCall: 2, seq: 9 });
    expect(thinkingAfter(10)).not.toBeNull(); // the summarizer is not the model thinking
    expect(thinkingAfter(11)).toBeNull(); // the reply came with no text and no call
    expect(thinkingAfter(13)).toMatchObject({ modelCall: 3 });
    expect(thinkingAfter(14)).toBeNull(); // the end
    // A call ends a thought as text does.
    const called = reduceAll(initialThreadView(), [...events.slice(0, 3), events[5]]);
    expect(called.turns[0].thinking).toBeNull();
    // A late thought of an ended turn is not shown.
    const late = reduce(reduceAll(initialThreadView(), events), e({ type: 'thinking' }));
    expect(late.turns[0].thinking).toBeNull();
  });

  it('thinking keeps no word of the thought, even when a server sends one', () => {
    const frame = {
      type: 'thinking',
      seq: 1,
      thread_id: 'thr_t',
      turn_id: 'turn_a',
      ts: '2026-01-01T00:00:01.000Z',
      text: 'the secret monologue',
      reasoning_content: 'more of the monologue'
    };
    const event = parseEvent(JSON.stringify(frame));
    expect(event).toEqual({
      type: 'thinking',
      seq: 1,
      thread_id: 'thr_t',
      turn_id: 'turn_a',
      ts: '2026-01-01T00:00:01.000Z'
    });
    const view = reduce(initialThreadView(), event as AnalystEvent);
    expect(view.turns[0].thinking).not.toBeNull();
    expect(JSON.stringify(view)).not.toMatch(/monologue/);
  });

  it('memory notes a summarizer change, applied or failed', () => {
    const e = turnOf('turn_a');
    const view = reduce(
      initialThreadView(),
      e({
        type: 'memory',
        origin: 'summarizer',
        status: 'failed',
        version: 0,
        changes: {},
        summarized_through: 0,
        message: 'model unavailable',
        usage: null
      })
    );
    expect(view.turns[0].memory).toEqual([
      expect.objectContaining({ status: 'failed', message: 'model unavailable' })
    ]);
  });

  it('events of two turns go to their own turns, in the order the turns began', () => {
    const a = turnOf('turn_a');
    const b = turnOf('turn_b', 3);
    const view = reduceAll(initialThreadView(), [
      a({ type: 'turn_started', prompt: 'one', model: 'm', rerun: false }),
      a({
        type: 'turn_ended',
        status: 'completed',
        message: null,
        counters: {},
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      }),
      b({ type: 'turn_started', prompt: 'two', model: 'm', rerun: false }),
      b({ type: 'text_delta', text: 'x' })
    ]);
    expect(view.turns.map(t => [t.prompt, t.status])).toEqual([
      ['one', 'completed'],
      ['two', 'running']
    ]);
    expect(activeTurn(view)?.prompt).toBe('two');
  });
});

describe('readResult', () => {
  it('reads each tool result into its view, by its tool model', () => {
    expect(
      readResult('list_tables', 'ok', {
        tables: [{ name: 'orders', kind: 'table', rows: 2400 }, { name: 'v' }]
      }).view
    ).toEqual({
      tables: [
        { name: 'orders', kind: 'table', rows: 2400 },
        { name: 'v', kind: 'table' }
      ]
    });
    expect(
      readResult('describe_table', 'ok', {
        name: 'orders',
        columns: [{ name: 'id', type: 'INTEGER', nullable: false }],
        rows: 3,
        sample: [{ id: 1 }]
      }).view
    ).toEqual({
      name: 'orders',
      columns: [{ name: 'id', type: 'INTEGER' }],
      rows: 3,
      sample: [{ id: 1 }]
    });
    expect(
      readResult('list_artifacts', 'ok', {
        artifacts: [{ id: 'a', name: 'n', type: 'image', made_by: 'run_python', code: 'x' }]
      }).view
    ).toEqual({ artifacts: [{ id: 'a', name: 'n', type: 'image', made_by: 'run_python' }] });
    expect(
      readResult('find', 'ok', {
        query: 'sales',
        matches: [{ kind: 'table', name: 'orders', score: 0.9 }]
      }).view
    ).toEqual({ query: 'sales', matches: [{ kind: 'table', name: 'orders', score: 0.9 }] });
    expect(
      readResult('clarify', 'ok', {
        asked: 'Which year?',
        candidates: ['2024', '2025'],
        question_for_user: 'Which year: 2024 or 2025?'
      }).view
    ).toEqual({
      asked: 'Which year?',
      candidates: ['2024', '2025'],
      question_for_user: 'Which year: 2024 or 2025?'
    });
    expect(
      readResult('run_sql', 'ok', {
        rows: 5,
        truncated: true,
        row_cap: { cap: 5, kept: 5, dropped: 7 },
        columns: []
      }).view
    ).toMatchObject({ truncated: true, row_cap: { cap: 5, kept: 5, dropped: 7 } });
    expect(
      readResult('run_python', 'ok', {
        stdout: '',
        result: '42',
        stderr: 'warn',
        files_not_stored: [{ path: 'x.bin', reason: 'too big' }],
        files_note: '1 file'
      }).view
    ).toEqual({
      stdout: '',
      result: '42',
      stderr: 'warn',
      artifacts: [],
      files_not_stored: [{ path: 'x.bin', reason: 'too big' }],
      files_note: '1 file'
    });
  });

  it('falls back to a thinner view for a result of an unexpected shape, keeping the raw JSON', () => {
    const odd = {
      rows: 'many',
      columns: 'a,b',
      sample: 7,
      expectation: { status: 'failed', rule: 'non_empty', detail: '0 rows' }
    };
    const view = readResult('run_sql', 'ok', odd);
    expect(view.view).toEqual({ columns: [], sample: [], truncated: false });
    expect(view.expectation).toEqual({ status: 'failed', rule: 'non_empty', detail: '0 rows' });
    expect(view.raw).toBe(odd);
    expect(readResult('a_new_tool', 'ok', { x: 1 }).view).toBeNull();
    expect(
      readResult('run_sql', 'error', {
        error: { reason: 'unknown_column', message: 'no column x', hint: 'h', suggestions: ['y'] }
      })
    ).toEqual({
      view: null,
      error: { reason: 'unknown_column', message: 'no column x', hint: 'h', suggestions: ['y'] },
      raw: {
        error: { reason: 'unknown_column', message: 'no column x', hint: 'h', suggestions: ['y'] }
      }
    });
  });
});
