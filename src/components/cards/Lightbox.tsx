import * as React from 'react';
import { createPortal } from 'react-dom';

export interface ILightboxProps {
  /** What it shows, said to screen readers and on its bar ("Figure 1 of step 2"). */
  label: string;
  onClose: () => void;
  children: React.ReactNode;
}

/**
 * A chart at full size over the whole page: a modal dialog on a dimmed backdrop, closed by
 * Escape, its close button or a click on the backdrop. The focus goes to the close button and
 * comes back to what had it. On the page's body (a portal), not in the panel: the sidebar
 * is a few hundred pixels wide, the chart is not.
 */
export function Lightbox({ label, onClose, children }: ILightboxProps): JSX.Element {
  const close = React.useRef<HTMLButtonElement>(null);
  const latest = React.useRef(onClose);
  latest.current = onClose;

  React.useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    close.current?.focus();
    // Caught before JupyterLab's own key handling: Escape closes this, nothing else.
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        latest.current();
      }
    };
    document.addEventListener('keydown', onKey, true);
    return () => {
      document.removeEventListener('keydown', onKey, true);
      before?.focus?.();
    };
  }, []);

  return createPortal(
    <div
      className="jp-AnalystLightbox"
      onClick={event => {
        if (event.target === event.currentTarget) {
          onClose();
        }
      }}
    >
      <div className="jp-AnalystLightbox-frame" role="dialog" aria-modal="true" aria-label={label}>
        <div className="jp-AnalystLightbox-bar">
          <span className="jp-AnalystLightbox-label">{label}</span>
          <button
            ref={close}
            type="button"
            className="jp-Button jp-mod-minimal jp-AnalystLightbox-close"
            aria-label="Close"
            title="Close (Escape)"
            onClick={onClose}
          >
            ✕
          </button>
        </div>
        <div className="jp-AnalystLightbox-body">{children}</div>
      </div>
    </div>,
    document.body
  );
}
