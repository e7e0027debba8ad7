import { EVENT_TYPES, parseEvent, REASON_CODES, TURN_STATES } from '../../model/events';
import { reasonText, REASON_TEXT, STATE_LABEL } from '../../model/reasons';
import demoTurnJson from '../fixtures/demo-turn.json';

describe('parseEvent', () => {
  it('reads every event of a real turn as it is, from the object and from its JSON text', () => {
    for (const raw of demoTurnJson as unknown[]) {
      expect(parseEvent(raw)).toEqual(raw);
      expect(parseEvent(JSON.stringify(raw))).toEqual(raw);
    }
  });

  it('knows the seventeen event types the server emits', () => {
    expect([...EVENT_TYPES].sort()).toEqual(
      [
        'answer',
        'artifact',
        'context_usage',
        'guard',
        'memory',
        'plan',
        'plan_step',
        'starting',
        'state',
        'step_output',
        'step_progress',
        'text_delta',
        'thinking',
        'tool_call',
        'tool_result',
        'turn_ended',
        'turn_started'
      ].sort()
    );
  });

  it('fills the fields the server may leave out with the server defaults, and drops unknown ones', () => {
    expect(
      parseEvent({
        type: 'tool_result',
        seq: 4,
        call_id: 'c1',
        tool: 'run_sql',
        status: 'ok',
        result: {},
        extra: 1
      })
    ).toEqual({
      type: 'tool_result',
      seq: 4,
      thread_id: '',
      turn_id: '',
      ts: '',
      call_id: 'c1',
      tool: 'run_sql',
      status: 'ok',
      reused: false,
      result: {},
      artifact_ids: [],
      duration_s: 0
    });
    expect(parseEvent({ type: 'guard', seq: 2, reason: 'chat_mode', message: 'm' })).toMatchObject({
      call_id: null
    });
    expect(parseEvent({ type: 'turn_ended', seq: 3, status: 'interrupted' })).toMatchObject({
      message: null,
      counters: {}
    });
    expect(parseEvent({ type: 'turn_ended', seq: 4, status: 'needs_input' })).toMatchObject({
      status: 'needs_input'
    });
  });

  it('reads a turn’s ledger with the server’s defaults for what it leaves out', () => {
    const ended = parseEvent({
      type: 'turn_ended',
      seq: 5,
      status: 'completed',
      ledger: { usage: { calls: 1, prompt_tokens: 10, counted_by: 'server' }, steps: 1, extra: 2 }
    });
    const zero = { prompt_tokens: 0, completion_tokens: 0, counted_by: 'none', cost_usd: null };
    expect(ended).toMatchObject({
      ledger: {
        usage: { ...zero, calls: 1, prompt_tokens: 10, counted_by: 'server' },
        steps: 1,
        execution_s: 0,
        saved: { ...zero, steps: 0, execution_s: 0, untracked: 0 },
        price: null,
        summarizer: { ...zero, calls: 0 }
      }
    });
    expect(ended !== null && ended.type === 'turn_ended' && ended.ledger).not.toHaveProperty(
      'extra'
    );
  });

  it.each<[string, unknown]>([
    ['not JSON', '{"type": "text_delta", "seq": 1, "text": '],
    ['not an object', ['text_delta']],
    ['null', null],
    ['an unknown type', { type: 'telepathy', seq: 1 }],
    ['no type', { seq: 1, text: 'hi' }],
    ['no seq', { type: 'text_delta', text: 'hi' }],
    ['seq 0 (not persisted)', { type: 'text_delta', seq: 0, text: 'hi' }],
    ['a fractional seq', { type: 'text_delta', seq: 1.5, text: 'hi' }],
    ['a seq as text', { type: 'text_delta', seq: '1', text: 'hi' }],
    ['a required field missing', { type: 'text_delta', seq: 1 }],
    [
      'a field of the wrong kind',
      { type: 'tool_call', seq: 1, call_id: 'c', tool: 't', arguments: [] }
    ],
    ['an unknown reason code', { type: 'guard', seq: 1, reason: 'felt_like_it', message: 'm' }],
    ['an unknown state', { type: 'state', seq: 1, from_state: null, to_state: 'dreaming' }],
    [
      'a counter that is not a count',
      { type: 'turn_ended', seq: 1, status: 'completed', counters: { executed: 'three' } }
    ],
    ['a missing nullable field', { type: 'state', seq: 1, to_state: 'planning' }]
  ])('refuses a frame with %s, without throwing', (_why, raw) => {
    expect(parseEvent(raw)).toBeNull();
  });
});

describe('reasons', () => {
  it('has plain words for every reason code and a label for every state', () => {
    for (const code of REASON_CODES) {
      expect(REASON_TEXT[code].split(' ').length).toBeGreaterThanOrEqual(2); // words, not a code
      expect(reasonText(code)).toBe(REASON_TEXT[code]);
    }
    for (const state of TURN_STATES) {
      expect(STATE_LABEL[state]).toMatch(/\w/);
    }
    expect(reasonText('duplicate_tool_call_skipped')).toBe('skipped: the same step already ran');
  });

  it('shows a code this client does not know in words rather than not at all', () => {
    expect(reasonText('thread_cap_reached')).toBe('thread cap reached');
  });
});
