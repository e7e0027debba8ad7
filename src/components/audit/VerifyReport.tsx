import * as React from 'react';

import type { CheckStatus, IArtifactCheck, IVerifyReport } from '../../transport/api';
import { shortFingerprint } from '../artifacts/format';

/** How each status reads. */
const STATUS_WORDS: Record<CheckStatus, string> = {
  matched: 'matched',
  changed: 'changed',
  missing: 'missing'
};

/** How each cause of a mismatch reads. */
const CAUSE_WORDS: Record<NonNullable<IArtifactCheck['cause']>, string> = {
  code_changed: 'code changed',
  data_changed: 'data changed',
  environment_changed: 'environment changed',
  not_deterministic: 'not deterministic',
  unexplained: 'unexplained'
};

/** Why each artifact that did not reproduce differs: its cause, what shows it, the edit. */
function Causes({ checks }: { checks: IArtifactCheck[] }): JSX.Element | null {
  const explained = checks.filter(c => c.status !== 'matched' && c.cause);
  if (!explained.length) {
    return null;
  }
  return (
    <ul className="jp-AnalystVerify-causes" aria-label="Why">
      {explained.map(check => (
        <li key={check.artifact_id} data-cause={check.cause}>
          <strong>{check.name}</strong>: {CAUSE_WORDS[check.cause!]}
          {check.evidence?.summary && (
            <span className="jp-AnalystVerify-evidence"> ({check.evidence.summary})</span>
          )}
          {check.evidence?.diff && (
            <details>
              <summary>The edit</summary>
              <pre className="jp-AnalystVerify-diff">{check.evidence.diff}</pre>
            </details>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * Whether the report checked nothing: a notebook that ran but whose thread made no artifact
 * proves nothing by matching, and is not shown as a pass.
 */
export function checkedNothing(report: IVerifyReport): boolean {
  return report.verdict === 'nothing_to_verify';
}

/** The overall result in a sentence: "All 2 artifacts matched", or what did not. */
export function verdict(report: IVerifyReport): string {
  const { matched = 0, changed = 0, missing = 0 } = report.counts;
  const total = report.checks.length;
  if (checkedNothing(report)) {
    return 'Nothing to verify: the thread made no artifact to compare';
  }
  if (report.ok) {
    return total === 1 ? 'The artifact matched' : `All ${total} artifacts matched`;
  }
  const parts = [`${matched} matched`];
  if (changed) {
    parts.push(`${changed} changed`);
  }
  if (missing) {
    parts.push(`${missing} missing`);
  }
  return `Not reproduced: ${parts.join(', ')}`;
}

/**
 * The verify report: each artifact of the notebook's manifest with its status and its
 * expected and re-computed fingerprints (short), why each that differs does (its cause and
 * evidence), then the overall result and any execution error.
 */
export function VerifyReport({ report }: { report: IVerifyReport }): JSX.Element {
  return (
    <div className="jp-AnalystVerify" data-ok={report.ok} aria-label="Verify report">
      <p
        className={`jp-AnalystVerify-verdict jp-mod-${
          checkedNothing(report) ? 'empty' : report.ok ? 'ok' : 'failed'
        }`}
      >
        {verdict(report)}{' '}
        <span className="jp-AnalystVerify-source">(re-executed on {report.source})</span>
      </p>
      {report.checks.length > 0 && (
        <table className="jp-AnalystVerify-table">
          <thead>
            <tr>
              <th scope="col">Artifact</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Expected</th>
              <th scope="col">Actual</th>
            </tr>
          </thead>
          <tbody>
            {report.checks.map(check => (
              <tr
                key={check.artifact_id}
                className="jp-AnalystVerify-check"
                data-status={check.status}
                title={
                  check.call_id ? `step ${check.call_id}, cell ${check.cell ?? '?'}` : undefined
                }
              >
                <td>{check.name}</td>
                <td>{check.type}</td>
                <td className={`jp-AnalystVerify-status jp-mod-${check.status}`}>
                  {STATUS_WORDS[check.status]}
                </td>
                <td>
                  <code title={check.expected}>{shortFingerprint(check.expected)}</code>
                </td>
                <td>
                  <code title={check.actual ?? undefined}>{shortFingerprint(check.actual)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Causes checks={report.checks} />
      {report.error && (
        <pre className="jp-AnalystVerify-error" role="alert">
          {report.error}
        </pre>
      )}
    </div>
  );
}
