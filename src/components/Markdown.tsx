import * as React from 'react';

import { useWideContent } from '../hooks/useWideContent';
import { MimeOutput } from './MimeOutput';
import { WideCue } from './WideBlock';

export interface IMarkdownProps {
  text: string;
  className?: string;
  /** Called with the rendered node after each render (see MimeOutput). */
  onRendered?: (node: HTMLElement) => void;
}

/** Markdown rendered by JupyterLab (code blocks highlighted), as in a notebook's markdown cell. */
export function Markdown({ text, className, onRendered }: IMarkdownProps): JSX.Element {
  const bundle = React.useMemo(() => ({ data: { 'text/markdown': text } }), [text]);
  return <MimeOutput bundle={bundle} className={className} onRendered={onRendered} />;
}

/**
 * Code shown highlighted: a fenced block of `language` rendered as markdown, its lines kept
 * whole and scrolled sideways, with a cue when one runs past the card's edge.
 */
export function Code({ code, language }: { code: string; language: string }): JSX.Element {
  // A fence longer than any run of backticks in the code, so the code cannot close it.
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map(run => run.length));
  const fence = '`'.repeat(longest + 1);
  const frame = React.useRef<HTMLDivElement>(null);
  const wide = useWideContent(frame, code, 'pre');
  return (
    <div ref={frame} className="jp-AnalystCode-frame">
      <Markdown text={`${fence}${language}\n${code}\n${fence}`} className="jp-AnalystCode" />
      <WideCue wide={wide} />
    </div>
  );
}
