/**
 * "Re-answer on today's data": the button beside a verify report, its progress, and the
 * answer restated with each changed number old → new, each claim named for assistive tech.
 */

import * as React from 'react';
import { act } from 'react';

import { ServerConnection } from '@jupyterlab/services';

import {
  AnalystClient,
  IClaimCheck,
  IReanswerReport,
  IVerification,
  IVerifyReport
} from '../../transport/api';
import { ThreadActions } from '../../components/ThreadActions';
import { AnalystContext } from '../../context';
import { claimLabel, ReanswerReport, reanswerSummary } from '../../components/audit/ReanswerReport';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

/** `node` inside the panel's context (its markdown shown as text: no rendermime here). */
function inPanel(node: JSX.Element, client?: AnalystClient): JSX.Element {
  const shown =
    client ?? new AnalystClient(ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' }));
  return (
    <AnalystContext.Provider
      value={{ client: shown, rendermime: null, commands: null, notebooks: null }}
    >
      {node}
    </AnalystContext.Provider>
  );
}

const ORIGINAL = 'alpha totals 45.0 and beta 33.0, a gap of 12.0; up 37% on last year.';
const TODAY = 'alpha totals 47.0 and beta 33.0, a gap of 14.0; up 37% on last year.';

function claim(
  text: string,
  status: IClaimCheck['status'],
  newText: string = text,
  extra: Partial<IClaimCheck> = {}
): IClaimCheck {
  const start = TODAY.indexOf(newText);
  return {
    text,
    new_text: newText,
    status,
    kind: text.endsWith('%') ? 'percent' : 'number',
    old: text,
    new: newText,
    call_id: 'call_1',
    row: 0,
    column: 'total',
    derived: null,
    note: null,
    start,
    end: start + newText.length,
    ...extra
  };
}

const REANSWER: IReanswerReport = {
  notebook: null,
  source: 'items',
  output: 'analyst/totals-1234abcd.reanswered.ipynb',
  output_refused: null,
  counts: { changed: 2, unchanged: 1, gone: 0, not_rechecked: 1 },
  answers: [
    {
      turn_id: 'turn_1',
      original: ORIGINAL,
      answer: TODAY,
      marked: TODAY.replace('47.0', '47.0 (was 45.0)').replace('14.0', '14.0 (was 12.0)'),
      claims: [
        claim('45.0', 'changed', '47.0'),
        claim('33.0', 'unchanged', '33.0', { row: 1 }),
        claim('12.0', 'changed', '14.0', {
          row: null,
          column: null,
          call_id: null,
          derived: 'difference'
        }),
        claim('37%', 'not_rechecked', '37%', {
          row: null,
          column: null,
          call_id: null,
          note: 'no step showed this number: not re-checked'
        })
      ],
      citations: [],
      unsupported: []
    }
  ]
};

const VERIFY_REPORT: IVerifyReport = {
  notebook: null,
  source: 'items',
  verdict: 'not_verified',
  checks: [],
  error: null,
  counts: { matched: 0, changed: 1, missing: 0 },
  ok: false
};

describe('ReanswerReport', () => {
  it('says whether today’s data changes the answer, and each number old → new', () => {
    expect(reanswerSummary(REANSWER)).toBe(
      'Today’s data changes the answer: 2 changed, 1 unchanged, 1 not re-checked'
    );
    const opened: string[] = [];
    act(() =>
      mounted
        .root()
        .render(inPanel(<ReanswerReport reanswer={REANSWER} onOpen={p => opened.push(p)} />))
    );
    const host = mounted.host();
    // Each changed number highlighted where it stands: new (was old).
    const highlighted = Array.from(host.querySelectorAll('mark.jp-AnalystReanswer-changed'));
    expect(highlighted.map(m => m.textContent)).toEqual(['47.0 (was 45.0)', '14.0 (was 12.0)']);
    const region = host.querySelector('[role="region"]')!;
    expect(host.querySelector('.jp-AnalystReanswer-text')!.textContent).toContain(
      'alpha totals 47.0 (was 45.0) and beta 33.0, a gap of 14.0 (was 12.0)'
    );
    expect(region.getAttribute('aria-label')).toBe('Re-answer on today’s data');
    const lines = Array.from(host.querySelectorAll('.jp-AnalystReanswer-claim'));
    expect(lines.map(l => l.getAttribute('data-status'))).toEqual([
      'changed',
      'unchanged',
      'changed',
      'not_rechecked'
    ]);
    // Old struck through, new beside it: both read, not only a color.
    expect(lines[0].querySelector('del')!.textContent).toBe('45.0');
    expect(lines[0].querySelector('ins')!.textContent).toBe('47.0');
    expect(lines[0].textContent).toContain('45.0 → 47.0 changed · row 1, column total');
    expect(lines[0].getAttribute('aria-label')).toBe('45.0 changed to 47.0 (row 1, column total)');
    expect(lines[1].querySelector('del')).toBeNull();
    expect(lines[2].getAttribute('aria-label')).toBe('12.0 changed to 14.0 (derived: difference)');
    expect(lines[3].getAttribute('aria-label')).toBe('37%: not re-checked');
    expect(lines[3].textContent).toContain('no step showed this number');
    expect(host.querySelector('.jp-AnalystReanswer-caveat')!.textContent).toContain(
      'not re-checked'
    );
    const link = host.querySelector<HTMLAnchorElement>('.jp-AnalystReanswer-path')!;
    expect(link.getAttribute('aria-label')).toBe(
      'Open the re-answered notebook analyst/totals-1234abcd.reanswered.ipynb'
    );
    act(() => link.click());
    expect(opened).toEqual(['analyst/totals-1234abcd.reanswered.ipynb']);
  });

  it('says the same numbers hold, and why a notebook was not written', () => {
    const same: IReanswerReport = {
      ...REANSWER,
      output: null,
      output_refused: 'analyst/x.reanswered.ipynb cannot be written in your Jupyter folder',
      counts: { changed: 0, unchanged: 2, gone: 0, not_rechecked: 0 }
    };
    expect(reanswerSummary(same)).toBe(
      'Today’s data gives the same numbers: 0 changed, 2 unchanged'
    );
    expect(claimLabel({ ...REANSWER.answers[0].claims[1] })).toBe(
      '33.0: unchanged (row 2, column total)'
    );
    act(() =>
      mounted.root().render(inPanel(<ReanswerReport reanswer={same} onOpen={() => undefined} />))
    );
    expect(mounted.host().querySelector('.jp-AnalystReanswer-path')).toBeNull();
    expect(mounted.host().textContent).toContain('was not written: analyst/x.reanswered.ipynb');
  });
});

describe('the Re-answer button beside a verify report', () => {
  const verification = (
    kind: IVerification['kind'],
    status: IVerification['status'],
    done: boolean
  ): IVerification => ({
    verification_id: `ver_${kind}`,
    thread_id: 'thr_1',
    kind,
    status,
    notebook: null,
    source: 'items',
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    report: done ? VERIFY_REPORT : null,
    reanswer: done && kind === 'reanswer' ? REANSWER : null,
    error: null
  });
  const json = (body: unknown, status = 200): Response =>
    new Response(JSON.stringify(body), { status, headers: { 'Retry-After': '1' } });

  afterEach(() => jest.useRealTimers());

  it('is offered once a report shows; it shows its progress, then the answer restated', async () => {
    jest.useFakeTimers();
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const answers = [
      () => json(verification('verify', 'done', true), 202),
      () => json(verification('reanswer', 'running', false), 202),
      () => json(verification('reanswer', 'done', true))
    ];
    const calls: string[] = [];
    jest.spyOn(client, 'request').mockImplementation(async (path, init) => {
      calls.push(`${init?.method ?? 'GET'} ${path} ${init?.body ?? ''}`.trim());
      return answers.shift()!();
    });
    act(() =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <ThreadActions threadId="thr_1" running={false} />
        </AnalystContext.Provider>
      )
    );
    const host = mounted.host();
    const reanswerButton = (): HTMLButtonElement | null =>
      host.querySelector<HTMLButtonElement>('.jp-AnalystThreadActions-reanswer');
    expect(reanswerButton()).toBeNull(); // nothing to re-answer beside yet

    await act(async () =>
      host.querySelector<HTMLButtonElement>('.jp-AnalystThreadActions-verify')!.click()
    );
    const button = reanswerButton()!;
    expect(button.tagName).toBe('BUTTON'); // reached by Tab, pressed by Enter or Space
    expect(button.textContent).toBe('Re-answer on today’s data');
    expect(host.querySelector('.jp-AnalystVerify')).not.toBeNull();

    await act(async () => button.click());
    const progress = host.querySelector('.jp-AnalystThreadActions-progress')!;
    expect(progress.textContent).toContain('Re-answering: re-running the notebook on today’s data');
    expect(progress.querySelector('progress')!.getAttribute('aria-label')).toContain(
      'Re-answering'
    );
    await act(async () => jest.advanceTimersByTimeAsync(1000));
    expect(host.querySelector('.jp-AnalystVerify')).not.toBeNull();
    expect(host.querySelector('.jp-AnalystReanswer-summary')!.textContent).toContain(
      'Today’s data changes the answer'
    );
    expect(host.querySelector('.jp-AnalystReanswer-claim ins')!.textContent).toBe('47.0');
    expect(calls).toEqual([
      'POST threads/thr_1/verify {}',
      'POST threads/thr_1/verify {"reanswer":true}',
      'GET threads/thr_1/verifications/ver_reanswer'
    ]);
  });

  it('says so when the verification it followed was a plain one', async () => {
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const answers = [
      () => json(verification('verify', 'done', true), 202),
      () => json(verification('verify', 'done', true), 202)
    ];
    jest.spyOn(client, 'request').mockImplementation(async () => answers.shift()!());
    act(() =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <ThreadActions threadId="thr_1" running={false} />
        </AnalystContext.Provider>
      )
    );
    const host = mounted.host();
    await act(async () =>
      host.querySelector<HTMLButtonElement>('.jp-AnalystThreadActions-verify')!.click()
    );
    await act(async () =>
      host.querySelector<HTMLButtonElement>('.jp-AnalystThreadActions-reanswer')!.click()
    );
    expect(host.querySelector('[role="alert"]')!.textContent).toContain(
      'ended without a re-answer'
    );
  });
});
