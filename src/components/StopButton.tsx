import * as React from 'react';

export interface IStopButtonProps {
  stopping: boolean;
  onStop: () => void;
}

/** Stops the running turn; shown from the moment a turn is asked. */
export function StopButton({ stopping, onStop }: IStopButtonProps): JSX.Element {
  return (
    <button
      type="button"
      className="jp-AnalystPrompt-stop jp-Button jp-mod-styled jp-mod-warn"
      aria-label="Stop the turn"
      disabled={stopping}
      onClick={onStop}
    >
      {stopping ? 'Stopping…' : 'Stop'}
    </button>
  );
}
