import * as React from 'react';

import { TOOL_STATUS_LABEL, type CardStatus } from '../../model';

/** The state of a step: running, done, failed, refused, not finished. */
export function StatusBadge({ status }: { status: CardStatus }): JSX.Element {
  return (
    <span className={`jp-AnalystBadge jp-AnalystBadge-${status}`} data-status={status}>
      {TOOL_STATUS_LABEL[status]}
    </span>
  );
}

/** An earlier identical step's result or artifact, reused rather than made again. */
export function ReusedBadge(): JSX.Element {
  return (
    <span
      className="jp-AnalystBadge jp-AnalystBadge-reused"
      title="An identical earlier step's result: nothing was run or stored again"
    >
      reused
    </span>
  );
}
