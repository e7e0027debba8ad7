import * as React from 'react';

/** The views of a selected thread. */
export type ThreadViewName = 'conversation' | 'artifacts';

const LABELS: Record<ThreadViewName, string> = {
  conversation: 'Conversation',
  artifacts: 'Artifacts'
};

export interface IThreadViewTabsProps {
  view: ThreadViewName;
  onChange: (view: ThreadViewName) => void;
}

/** "Conversation | Artifacts": a tab list (arrow keys move between the tabs). */
export function ThreadViewTabs({ view, onChange }: IThreadViewTabsProps): JSX.Element {
  const names = Object.keys(LABELS) as ThreadViewName[];
  const refs = React.useRef<Record<string, HTMLButtonElement | null>>({});
  const move = (event: React.KeyboardEvent, step: number): void => {
    event.preventDefault();
    const next = names[(names.indexOf(view) + step + names.length) % names.length];
    onChange(next);
    refs.current[next]?.focus();
  };
  return (
    <div className="jp-AnalystThreadViews" role="tablist" aria-label="Thread views">
      {names.map(name => (
        <button
          key={name}
          ref={node => {
            refs.current[name] = node;
          }}
          type="button"
          role="tab"
          className="jp-AnalystThreadViews-tab"
          aria-selected={view === name}
          tabIndex={view === name ? 0 : -1}
          onClick={() => onChange(name)}
          onKeyDown={event => {
            if (event.key === 'ArrowRight') {
              move(event, 1);
            } else if (event.key === 'ArrowLeft') {
              move(event, -1);
            }
          }}
        >
          {LABELS[name]}
        </button>
      ))}
    </div>
  );
}
