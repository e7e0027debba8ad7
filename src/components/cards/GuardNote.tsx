import * as React from 'react';

import type { GuardNotice } from '../../model';

/** What a guard did, in plain words; its code and the server's explanation on hover. */
export function GuardNote({ notice }: { notice: GuardNotice }): JSX.Element {
  return (
    <div
      className="jp-AnalystGuard"
      role="note"
      data-card="guard"
      data-reason={notice.reason}
      title={`${notice.reason}: ${notice.message}`}
    >
      <span className="jp-AnalystGuard-text">{notice.text}</span>
      {notice.message && <span className="jp-AnalystGuard-message">{notice.message}</span>}
    </div>
  );
}
