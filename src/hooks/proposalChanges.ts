/**
 * Word that a thread's proposals changed (a change accepted or rejected, a turn reverted),
 * from the card where it was decided to every other view of them (the other cards of the
 * thread, its list of pending proposals), which then read them again from the server.
 */

type Listener = () => void;

const listeners = new Map<string, Set<Listener>>();

/** Call `listener` whenever `threadId`'s proposals change; the returned function stops it. */
export function onProposalsChanged(threadId: string, listener: Listener): () => void {
  let set = listeners.get(threadId);
  if (set === undefined) {
    set = new Set();
    listeners.set(threadId, set);
  }
  set.add(listener);
  return () => {
    set.delete(listener);
    if (set.size === 0) {
      listeners.delete(threadId);
    }
  };
}

/** Say that `threadId`'s proposals changed. */
export function proposalsChanged(threadId: string): void {
  for (const listener of [...(listeners.get(threadId) ?? [])]) {
    listener();
  }
}
