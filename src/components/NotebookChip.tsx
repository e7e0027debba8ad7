import { closeIcon, notebookIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import type { AttachChoice, IOpenNotebook } from '../hooks/notebookAttachment';

export interface INotebookChipProps {
  /** The notebooks open now. */
  open: readonly IOpenNotebook[];
  choice: AttachChoice;
  /** The notebook the next question carries, or null. */
  attached: IOpenNotebook | null;
  onChoose: (id: string) => void;
  onFollow: () => void;
  onDetach: () => void;
}

/** What the chip's title says the attachment means. */
export function chipTitle(choice: AttachChoice, attached: IOpenNotebook | null): string {
  if (attached === null) {
    return choice.kind === 'detached'
      ? 'Your questions go without a notebook: the model sees none. Click to attach one.'
      : 'No notebook is open: your questions go without one.';
  }
  const carries = `Your question carries ${attached.path}: the model sees its outline and can read its cells.`;
  return choice.kind === 'chosen'
    ? `${carries} You chose it: it stays attached whichever notebook is in front. Click to change.`
    : `${carries} It follows the notebook in front. Click to choose another.`;
}

/**
 * The notebook the next question carries, as a chip above the prompt: its name (its path
 * and what it means on hover), a menu of the open notebooks to choose another, and a
 * button that detaches it. Nothing while no notebook is open and none was chosen away.
 */
export function NotebookChip({
  open,
  choice,
  attached,
  onChoose,
  onFollow,
  onDetach
}: INotebookChipProps): JSX.Element | null {
  const [menu, setMenu] = React.useState(false);
  const root = React.useRef<HTMLDivElement>(null);

  // The menu closes on a click elsewhere and on Escape.
  React.useEffect(() => {
    if (!menu) {
      return;
    }
    const away = (event: MouseEvent): void => {
      if (!root.current?.contains(event.target as Node)) {
        setMenu(false);
      }
    };
    const escape = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') {
        setMenu(false);
      }
    };
    document.addEventListener('mousedown', away);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('mousedown', away);
      document.removeEventListener('keydown', escape);
    };
  }, [menu]);

  if (open.length === 0 && choice.kind !== 'detached') {
    return null;
  }
  const pick = (act: () => void) => (): void => {
    act();
    setMenu(false);
  };
  // The notebook followed now, under "The notebook in front" (its own line: the menu is narrow).
  const followed = attached !== null && choice.kind === 'follow' ? attached.name : '';

  return (
    <div
      className="jp-AnalystAttach"
      ref={root}
      data-attached={attached?.path ?? ''}
      data-choice={choice.kind}
    >
      <button
        type="button"
        className="jp-AnalystAttach-chip"
        title={chipTitle(choice, attached)}
        aria-haspopup="menu"
        aria-expanded={menu}
        aria-label={attached ? `Notebook: ${attached.name}` : 'No notebook'}
        onClick={() => setMenu(m => !m)}
      >
        {attached && <notebookIcon.react tag="span" className="jp-AnalystAttach-glyph" />}
        <span className="jp-AnalystAttach-name">{attached ? attached.name : 'No notebook'}</span>
        <span className="jp-AnalystAttach-caret" aria-hidden="true">
          ▾
        </span>
      </button>
      {attached && (
        <button
          type="button"
          className="jp-AnalystAttach-detach"
          aria-label={`Detach ${attached.name}`}
          title="Send the next questions without a notebook"
          onClick={onDetach}
        >
          <closeIcon.react tag="span" />
        </button>
      )}
      {menu && (
        <ul className="jp-AnalystAttach-menu" role="menu" aria-label="Notebook to attach">
          <li role="none">
            <button
              type="button"
              role="menuitemradio"
              aria-checked={choice.kind === 'follow'}
              disabled={open.length === 0}
              title="Carry whichever notebook is in front"
              onClick={pick(onFollow)}
            >
              The notebook in front
              {followed && <span className="jp-AnalystAttach-followed">{followed}</span>}
            </button>
          </li>
          {open.map(notebook => (
            <li role="none" key={notebook.id}>
              <button
                type="button"
                role="menuitemradio"
                aria-checked={choice.kind === 'chosen' && choice.id === notebook.id}
                title={notebook.path}
                onClick={pick(() => onChoose(notebook.id))}
              >
                {notebook.name}
              </button>
            </li>
          ))}
          <li role="none">
            <button
              type="button"
              role="menuitemradio"
              aria-checked={choice.kind === 'detached'}
              onClick={pick(onDetach)}
            >
              No notebook
            </button>
          </li>
        </ul>
      )}
    </div>
  );
}
