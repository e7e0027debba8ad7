import * as React from 'react';

import type { GuardNotice } from '../../model';
import { useStepNumbers } from './Details';
import { withStepNames } from './stepNames';

/** What a guard did, in plain words, and the server's explanation (steps by their number). */
export function GuardNote({ notice }: { notice: GuardNotice }): JSX.Element {
  const message = withStepNames(notice.message, useStepNumbers());
  return (
    <div className="jp-AnalystGuard" role="note" data-card="guard" data-reason={notice.reason}>
      <span className="jp-AnalystGuard-text">{notice.text}</span>
      {message && <span className="jp-AnalystGuard-message">{message}</span>}
    </div>
  );
}
