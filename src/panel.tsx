import { ReactWidget } from '@jupyterlab/apputils';
import * as React from 'react';

import { AnalystClient } from './api';
import { Sidebar } from './components/Sidebar';
import { analystIcon } from './icons';

/** The id of the panel's widget (its sidebar tab is `[data-id="<id>"]`). */
export const PANEL_ID = 'jupyter-analyst-panel';

/** Options of the panel. */
export interface IAnalystPanelOptions {
  client?: AnalystClient;
  submitOnEnter?: boolean;
}

/** The "Data analyst" panel of the right sidebar: a React tree in a Lumino widget. */
export class AnalystPanel extends ReactWidget {
  readonly client: AnalystClient;
  private _submitOnEnter: boolean;

  constructor(options: IAnalystPanelOptions = {}) {
    super();
    this.client = options.client ?? new AnalystClient();
    this._submitOnEnter = options.submitOnEnter ?? true;
    this.id = PANEL_ID;
    this.addClass('jp-AnalystPanel');
    this.title.icon = analystIcon;
    this.title.caption = 'Data analyst';
  }

  /** Enter submits a prompt (else Ctrl/Cmd+Enter does). */
  get submitOnEnter(): boolean {
    return this._submitOnEnter;
  }

  set submitOnEnter(value: boolean) {
    if (value !== this._submitOnEnter) {
      this._submitOnEnter = value;
      this.update();
    }
  }

  protected render(): JSX.Element {
    return <Sidebar client={this.client} submitOnEnter={this._submitOnEnter} />;
  }
}
