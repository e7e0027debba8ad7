/**
 * What the panel's components use of JupyterLab, given once by the plugin: the API client,
 * rendermime (outputs look as in a notebook), the command registry (open a document) and
 * the notebook tracker (the active notebook, to insert cells into).
 */

import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { AnalystClient } from './transport/api';

export interface IAnalystServices {
  client: AnalystClient;
  /**
   * Renders MIME bundles (tables, images, markdown), all of them the model's, untrusted and
   * made inert (src/untrusted); null outside JupyterLab (tests).
   */
  rendermime: IRenderMimeRegistry | null;
  /** JupyterLab's commands, e.g. `docmanager:open`; null outside JupyterLab. */
  commands: CommandRegistry | null;
  /** The notebooks open in JupyterLab; null when the notebook plugin is absent. */
  notebooks: INotebookTracker | null;
}

export const AnalystContext = React.createContext<IAnalystServices | null>(null);

/** The services of the enclosing panel (a component outside one is a bug). */
export function useAnalyst(): IAnalystServices {
  const services = React.useContext(AnalystContext);
  if (services === null) {
    throw new Error('jupyter-analyst: a component was rendered outside the panel');
  }
  return services;
}
