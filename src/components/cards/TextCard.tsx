import * as React from 'react';

import { AnswerBody, type IAnswerReceipts } from '../receipts/AnswerReceipts';
import { InfoTip } from './InfoTip';

export interface ITextCardProps {
  text: string;
  /** The turn's answer (the streamed text it was made of, or the answer alone). */
  answer?: boolean;
  /** Names the answer cites that do not exist. */
  flagged?: string[];
  /** The size of the prompt of the model call that wrote the text (an ⓘ explains it). */
  context?: string;
  seq: number;
  /** For the answer: its receipts, once the turn's end has given them. */
  receipts?: IAnswerReceipts | null;
}

/**
 * Streamed text, as markdown. The same component shows the answer once it arrives, so
 * the text streamed into place stays where it is: no jump when the turn answers.
 */
export function TextCard({
  text,
  answer = false,
  flagged = [],
  context,
  seq,
  receipts = null
}: ITextCardProps): JSX.Element {
  return (
    <div
      className={`jp-AnalystText ${answer ? 'jp-AnalystText-answer' : ''}`.trim()}
      data-card={answer ? 'answer' : 'text'}
      data-seq={seq}
      role="group"
      aria-label={answer ? 'Answer' : 'Text of the model'}
    >
      {context && <InfoTip label="Size of the prompt that wrote this text" text={context} />}
      <AnswerBody text={text} receipts={answer ? receipts : null} className="jp-AnalystText-body" />
      {flagged.length > 0 && (
        <div className="jp-AnalystText-flagged" role="note">
          It cites what does not exist: {flagged.join(', ')}
        </div>
      )}
    </div>
  );
}
