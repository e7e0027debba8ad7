/** What the conversation's header offers to do with the thread (audit notebook, export, verify). */
export interface IThreadActionsProps {
  threadId: string;
  /** A turn is running (actions that read the finished thread wait). */
  running: boolean;
}

/** The thread's actions (placeholder: none yet). */
export function ThreadActions(_props: IThreadActionsProps): JSX.Element | null {
  return null;
}
