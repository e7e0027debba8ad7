import * as React from 'react';

import { IRawEvent } from '../api';

/** A line of text saying what an event is (until each type has its card). */
export function describeEvent(event: IRawEvent): string {
  const field = (name: string): string => String(event[name] ?? '');
  switch (event.type) {
    case 'turn_started':
      return field('prompt');
    case 'state':
      return `${field('from_state') || 'start'} → ${field('to_state')}`;
    case 'text_delta':
    case 'answer':
      return field('text');
    case 'tool_call':
      return field('tool');
    case 'tool_result':
      return `${field('tool')}: ${field('status')}${event.reused ? ' (reused)' : ''}`;
    case 'artifact':
      return `${field('artifact_type')} ${field('name')}${event.created ? '' : ' (reused)'}`;
    case 'guard':
      return `${field('reason')}: ${field('message')}`;
    case 'turn_ended':
      return field('status') + (event.message ? `: ${field('message')}` : '');
    default:
      return '';
  }
}

/** The thread's events in order, one line each: the placeholder of the conversation. */
export function EventList({ events }: { events: IRawEvent[] }): JSX.Element {
  return (
    <ol className="jp-AnalystEvents" aria-label="Conversation" aria-live="polite">
      {events.map(event => (
        <li
          key={event.seq}
          className={`jp-AnalystEvent jp-AnalystEvent-${event.type}`}
          data-seq={event.seq}
          data-type={event.type}
        >
          <span className="jp-AnalystEvent-type">{event.type}</span>
          <span className="jp-AnalystEvent-text">{describeEvent(event)}</span>
        </li>
      ))}
    </ol>
  );
}
