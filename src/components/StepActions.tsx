/** What a SQL or Python card offers to do with its step ("Insert as cell"). */
export interface IStepActionsProps {
  threadId: string;
  callId: string;
  tool: string;
}

/** The actions of one step's card (placeholder: none yet). */
export function StepActions(_props: IStepActionsProps): JSX.Element | null {
  return null;
}
