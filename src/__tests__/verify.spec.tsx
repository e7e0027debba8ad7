import * as React from 'react';
import { act } from 'react';

import { IArtifactCheck, IVerifyReport } from '../api';
import { ThreadViewName, ThreadViewTabs } from '../components/artifacts';
import { verdict, VerifyReportView } from '../notebook/VerifyReportView';
import { mountedRoot } from './dom';

const mounted = mountedRoot();

const FP = (digit: string): string => `sha256:${digit.repeat(64)}`;

function check(name: string, status: IArtifactCheck['status'], actual: string | null): IArtifactCheck {
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
  return {
    notebook: null,
    source: 'sales',
    checks,
    error,
    counts,
    ok: error === null && counts.matched === checks.length
  };
}

describe('VerifyReportView', () => {
  it('says all matched, with a row per artifact and short fingerprints', () => {
    const all = report([check('revenue', 'matched', FP('a')), check('chart.png', 'matched', FP('a'))]);
    expect(verdict(all)).toBe('All 2 artifacts matched');
    act(() => mounted.root().render(<VerifyReportView report={all} />));
    const rows = mounted.host().querySelectorAll('tbody tr');
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toBe('revenuedatasetmatchedaaaaaaaaaaaaaaaaaaaaaaaa');
    expect(mounted.host().querySelector('.jp-AnalystVerify')!.getAttribute('data-ok')).toBe('true');
    expect(mounted.host().textContent).toContain('re-executed on sales');
  });

  it('says what did not reproduce, a missing artifact with no actual fingerprint, and the error', () => {
    const bad = report(
      [check('revenue', 'changed', FP('b')), check('chart.png', 'missing', null), check('x', 'matched', FP('a'))],
      'NameError: name revenue is not defined'
    );
    expect(verdict(bad)).toBe('Not reproduced: 1 matched, 1 changed, 1 missing');
    act(() => mounted.root().render(<VerifyReportView report={bad} />));
    const statuses = Array.from(mounted.host().querySelectorAll('tbody tr')).map(r => r.getAttribute('data-status'));
    expect(statuses).toEqual(['changed', 'missing', 'matched']);
    expect(mounted.host().querySelectorAll('tbody tr')[0].textContent).toContain('bbbbbbbbbbbb');
    expect(mounted.host().querySelectorAll('tbody tr')[1].textContent).toContain('—');
    expect(mounted.host().querySelector('[role="alert"]')!.textContent).toContain('NameError');
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
