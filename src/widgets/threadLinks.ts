/**
 * Links that open the panel on a thread: `#jupyter-analyst-thread=ID`, as a chat's Analyst
 * persona ends its messages (jupyter_analyst/persona/chat_message.py, `PANEL_LINK`).
 *
 * Not a command link: JupyterLab's command linker asks before it runs a command from
 * untrusted content (a chat's message is), with a dialog warning that the document is not
 * trusted. Opening one of the user's own threads runs nothing, so a click on such a link is
 * taken here, before the page would follow it; and a page opened at such an address (the
 * link opened in a new tab) opens the thread once the panel is there. A link naming a thread
 * that is not the user's opens nothing: the server answers only the owner's threads.
 */

/** What a link's target starts with. */
export const THREAD_LINK = '#jupyter-analyst-thread=';

/** A thread id as the store makes them (`thr_…`), or as a test names one. */
const THREAD_ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The thread a link's target (or a page's `location.hash`) names, else null.
 *
 * @example threadOfLink('#jupyter-analyst-thread=thr_1') === 'thr_1'
 */
export function threadOfLink(href: string | null): string | null {
  if (!href) {
    return null;
  }
  const at = href.indexOf(THREAD_LINK);
  // The fragment of a link as written (`#…`), or of a whole address (`http://…/lab#…`).
  if (at < 0 || (at > 0 && href.indexOf('#') !== at)) {
    return null;
  }
  let id: string;
  try {
    id = decodeURIComponent(href.slice(at + THREAD_LINK.length));
  } catch {
    return null; // a malformed escape: no thread
  }
  return THREAD_ID.test(id) ? id : null;
}

/**
 * Open threads from their links in `win`: a click on one (in any part of the page, taken in
 * the capture phase so the page does not follow it, nor open a tab), and the page's own
 * address (now, and when it changes), whose fragment is then cleared so the same link
 * opens the thread again. Returns what stops listening.
 */
export function listenForThreadLinks(
  open: (threadId: string) => void,
  win: Window = window
): () => void {
  const onClick = (event: MouseEvent): void => {
    const target = event.target;
    if (!(target instanceof Element) || event.button !== 0) {
      return;
    }
    const anchor = target.closest('a[href]');
    const threadId = threadOfLink(anchor?.getAttribute('href') ?? null);
    if (threadId !== null) {
      event.preventDefault();
      event.stopPropagation();
      open(threadId);
    }
  };
  const fromAddress = (): void => {
    const threadId = threadOfLink(win.location.hash);
    if (threadId !== null) {
      const { pathname, search } = win.location;
      win.history.replaceState(win.history.state, '', pathname + search);
      open(threadId);
    }
  };
  win.document.addEventListener('click', onClick, true);
  win.addEventListener('hashchange', fromAddress);
  fromAddress();
  return () => {
    win.document.removeEventListener('click', onClick, true);
    win.removeEventListener('hashchange', fromAddress);
  };
}
