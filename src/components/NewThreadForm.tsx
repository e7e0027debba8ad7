import * as React from 'react';

import type { ISource } from '../transport/api';

export interface INewThreadFormProps {
  sources: ISource[];
  busy: boolean;
  onCreate: (options: { source?: string; title?: string }) => void;
}

/** "New thread": a source picker (the server's configured sources) and an optional title. */
export function NewThreadForm({ sources, busy, onCreate }: INewThreadFormProps): JSX.Element {
  const [source, setSource] = React.useState('');
  const [title, setTitle] = React.useState('');
  // The first source is the server's default: picked until the user picks another.
  const chosen = source || sources[0]?.name || '';

  const submit = (event: React.FormEvent): void => {
    event.preventDefault();
    onCreate({
      source: chosen || undefined,
      title: title.trim() || undefined
    });
    setTitle('');
  };

  return (
    <form className="jp-AnalystNewThread" onSubmit={submit}>
      <label className="jp-AnalystNewThread-field">
        <span>Source</span>
        <select
          className="jp-AnalystNewThread-source"
          value={chosen}
          onChange={e => setSource(e.target.value)}
          disabled={!sources.length}
        >
          {sources.map(s => (
            <option key={s.name} value={s.name}>
              {s.name}
            </option>
          ))}
        </select>
      </label>
      <label className="jp-AnalystNewThread-field">
        <span>Title</span>
        <input
          className="jp-AnalystNewThread-title"
          type="text"
          placeholder="optional"
          value={title}
          onChange={e => setTitle(e.target.value)}
        />
      </label>
      <button
        type="submit"
        className="jp-AnalystNewThread-create jp-Button jp-mod-styled jp-mod-accept"
        disabled={busy}
      >
        New thread
      </button>
    </form>
  );
}
