export { ArtifactsPanel, ARTIFACT_TYPES } from './ArtifactsPanel';
export type { IArtifactsPanelProps } from './ArtifactsPanel';
export { ThreadViewTabs } from './ThreadViewTabs';
export type { ThreadViewName } from './ThreadViewTabs';
