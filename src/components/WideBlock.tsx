import * as React from 'react';

import { IWideContent, useWideContent, wideCue } from '../hooks/useWideContent';

/** The cue under a block wider than its card (nothing when it fits). */
export function WideCue({ wide }: { wide: IWideContent }): JSX.Element | null {
  if (!wide.more) {
    return null;
  }
  return (
    <div className="jp-AnalystWideCue" data-columns={wide.columns}>
      {wideCue(wide)}
    </div>
  );
}

export interface IPrintedProps {
  className: string;
  label?: string;
  text: string;
}

/**
 * What a step printed, kept on its lines as a terminal shows it (a printed DataFrame's
 * columns stay aligned): scrolled sideways when wider than the card, with a cue saying so.
 */
export function Printed({ className, label, text }: IPrintedProps): JSX.Element {
  const ref = React.useRef<HTMLPreElement>(null);
  const wide = useWideContent(ref, text);
  return (
    <>
      <pre ref={ref} className={`jp-AnalystPrinted ${className}`} aria-label={label}>
        {text}
      </pre>
      <WideCue wide={wide} />
    </>
  );
}
