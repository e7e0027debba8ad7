import * as React from 'react';
import { act } from 'react';

import { ServerConnection } from '@jupyterlab/services';

import { AnalystClient, IArtifactCheck, IVerification, IVerifyReport } from '../../transport/api';
import { ThreadActions } from '../../components/ThreadActions';
import { AnalystContext } from '../../context';
import { ThreadViewName, ThreadViewTabs } from '../../components/artifacts';
import { verdict, VerifyReport } from '../../components/audit/VerifyReport';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

const FP = (digit: string): string => `sha256:${digit.repeat(64)}`;

function check(
  name: string,
  status: IArtifactCheck['status'],
  actual: string | null
): IArtifactCheck {
  return {
    artifact_id: `art_${name}`,
    name,
    type: name.endsWith('.png') ? 'image' : 'dataset',
    call_id: `call_${name}`,
    step_key: null,
    cell: 3,
    expected: FP('a'),
    actual,
    status
  };
}

function report(checks: IArtifactCheck[], error: string | null = null): IVerifyReport {
  const counts = { matched: 0, changed: 0, missing: 0 };
  checks.forEach(c => counts[c.status]++);
  const verdict: IVerifyReport['verdict'] =
    !checks.length && !error
      ? 'nothing_to_verify'
      : error === null && counts.matched === checks.length
        ? 'verified'
        : 'not_verified';
  return {
    notebook: null,
    source: 'sales',
    verdict,
    checks,
    error,
    counts,
    ok: verdict === 'verified'
  };
}

describe('VerifyReport', () => {
  it('says all matched, with a row per artifact and short fingerprints', () => {
    const all = report([
      check('revenue', 'matched', FP('a')),
      check('chart.png', 'matched', FP('a'))
    ]);
    expect(verdict(all)).toBe('All 2 artifacts matched');
    act(() => mounted.root().render(<VerifyReport report={all} />));
    const rows = mounted.host().querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toBe('revenuedatasetmatchedaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(mounted.host().querySelector('.jp-AnalystVerify')!.getAttribute('data-ok')).toBe('true');
    expect(mounted.host().textContent).toContain('re-executed on sales');
  });

  it('says what did not reproduce, a missing artifact with no actual fingerprint, and the error', () => {
    const bad = report(
      [
        check('revenue', 'changed', FP('b')),
        check('chart.png', 'missing', null),
        check('x', 'matched', FP('a'))
      ],
      'NameError: name revenue is not defined'
    );
    expect(verdict(bad)).toBe('Not reproduced: 1 matched, 1 changed, 1 missing');
    act(() => mounted.root().render(<VerifyReport report={bad} />));
    const statuses = Array.from(mounted.host().querySelectorAll('tbody tr')).map(r =>
      r.getAttribute('data-status')
    );
    expect(statuses).toEqual(['changed', 'missing', 'matched']);
    expect(mounted.host().querySelectorAll('tbody tr')[0].textContent).toContain('bbbbbbbbbbbb');
    expect(mounted.host().querySelectorAll('tbody tr')[1].textContent).toContain('—');
    expect(mounted.host().querySelector('[role="alert"]')!.textContent).toContain('NameError');
  });

  it('says why each artifact differs: its cause, its evidence and the edit', () => {
    const edited: IArtifactCheck = {
      ...check('revenue', 'changed', FP('b')),
      cause: 'code_changed',
      evidence: { summary: 'cell 3 was edited', diff: '-x = 1\n+x = 2' }
    };
    const moved: IArtifactCheck = {
      ...check('orders', 'changed', FP('c')),
      cause: 'data_changed',
      evidence: { summary: 'orders: 13 rows now, 12 recorded' }
    };
    act(() =>
      mounted
        .root()
        .render(<VerifyReport report={report([edited, moved, check('x', 'matched', FP('a'))])} />)
    );
    const causes = Array.from(mounted.host().querySelectorAll('[aria-label="Why"] li'));
    expect(causes.map(c => c.getAttribute('data-cause'))).toEqual(['code_changed', 'data_changed']);
    expect(causes[0].textContent).toContain('revenue: code changed (cell 3 was edited)');
    expect(causes[0].querySelector('pre')!.textContent).toBe('-x = 1\n+x = 2');
    expect(causes[1].textContent).toBe('orders: data changed (orders: 13 rows now, 12 recorded)');
  });
});

describe('a report that checked nothing', () => {
  it('says there was nothing to verify, neither matched nor failed', () => {
    const empty = report([]);
    expect(verdict(empty)).toBe('Nothing to verify: the thread made no artifact to compare');
    act(() => mounted.root().render(<VerifyReport report={empty} />));
    const said = mounted.host().querySelector('.jp-AnalystVerify-verdict')!;
    expect(said.className).toContain('jp-mod-empty');
    expect(said.textContent).not.toContain('matched');
    expect(mounted.host().querySelector('table')).toBeNull();
  });

  it('still fails when the notebook did not run', () => {
    expect(verdict(report([], 'NameError: x'))).toBe('Not reproduced: 0 matched');
  });
});

describe('the Verify button', () => {
  const verification = (status: IVerification['status'], done?: IVerifyReport): IVerification => ({
    verification_id: 'ver_1',
    thread_id: 'thr_1',
    kind: 'verify',
    status,
    notebook: null,
    source: 'sales',
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: null,
    finished_at: null,
    report: done ?? null,
    reanswer: null,
    error: null
  });
  const json = (body: unknown, status = 200): Response =>
    new Response(JSON.stringify(body), { status, headers: { 'Retry-After': '1' } });

  const mount = (answers: Array<() => Response>): string[] => {
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const calls: string[] = [];
    jest.spyOn(client, 'request').mockImplementation(async (path, init) => {
      calls.push(`${init?.method ?? 'GET'} ${path}`);
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
    return calls;
  };
  const verifyButton = (): HTMLButtonElement =>
    mounted.host().querySelector<HTMLButtonElement>('.jp-AnalystThreadActions-verify')!;

  afterEach(() => jest.useRealTimers());

  it('shows the verification waiting, then running, then its report', async () => {
    jest.useFakeTimers();
    const calls = mount([
      () => json(verification('queued'), 202),
      () => json(verification('running')),
      () => json(verification('done', report([check('revenue', 'matched', FP('a'))])))
    ]);
    await act(async () => verifyButton().click());
    const progress = (): string =>
      mounted.host().querySelector('.jp-AnalystThreadActions-progress')?.textContent ?? '';
    expect(progress()).toContain('waiting for the server');
    expect(verifyButton().disabled).toBe(true);
    await act(async () => jest.advanceTimersByTimeAsync(1000));
    expect(progress()).toContain('re-running the notebook');
    await act(async () => jest.advanceTimersByTimeAsync(1000));
    expect(mounted.host().querySelector('.jp-AnalystVerify-verdict')!.textContent).toContain(
      'The artifact matched'
    );
    expect(verifyButton().disabled).toBe(false);
    expect(calls).toHaveLength(3);
  });

  it('stops following the verification when the thread is no longer shown', async () => {
    jest.useFakeTimers();
    const calls = mount([() => json(verification('queued'), 202)]);
    await act(async () => verifyButton().click());
    act(() => mounted.root().render(<div />));
    await act(async () => jest.advanceTimersByTimeAsync(10_000));
    expect(calls).toEqual(['POST threads/thr_1/verify']);
  });
});

describe('ThreadViewTabs', () => {
  it('selects a view by click and moves with the arrow keys', () => {
    const chosen: ThreadViewName[] = [];
    let view: ThreadViewName = 'conversation';
    const draw = (): void =>
      act(() =>
        mounted.root().render(
          <ThreadViewTabs
            view={view}
            onChange={next => {
              chosen.push(next);
              view = next;
              draw();
            }}
          />
        )
      );
    draw();
    const tabs = mounted.host().querySelectorAll<HTMLButtonElement>('[role="tab"]');
    expect(Array.from(tabs).map(t => t.getAttribute('aria-selected'))).toEqual(['true', 'false']);
    act(() => tabs[1].click());
    expect(view).toBe('artifacts');
    act(() => {
      tabs[1].dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    });
    expect(chosen).toEqual(['artifacts', 'conversation']);
    expect(document.activeElement).toBe(tabs[0]);
  });
});
