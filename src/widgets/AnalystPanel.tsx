import { ReactWidget } from '@jupyterlab/apputils';
import * as React from 'react';

import { AnalystClient } from '../transport/api';
import { Sidebar } from '../components/Sidebar';
import type { IThreadRequest } from '../hooks/useThreadList';
import { AnalystContext, IAnalystServices } from '../context';
import { analystIcon } from '../icons';
import { untrustedRendermime } from '../untrusted';

/** The id of the panel's widget (its sidebar tab is `[data-id="<id>"]`). */
export const PANEL_ID = 'jupyter-analyst-panel';
/** The id of the panel when it is opened in the main area. */
export const MAIN_PANEL_ID = 'jupyter-analyst-main';

/** Where a panel is: the right sidebar (narrow) or the main area (room to read). */
export type PanelArea = 'sidebar' | 'main';

/** Options of the panel. */
export interface IAnalystPanelOptions {
  /**
   * JupyterLab's services (a client of the page's server when only that is given). The
   * panel renders with a registry made from the rendermime given (see `untrustedRendermime`).
   */
  services?: Partial<IAnalystServices>;
  submitOnEnter?: boolean;
  /** Where it is shown (the sidebar by default). */
  area?: PanelArea;
}

/** The "Data analyst" panel of the right sidebar: a React tree in a Lumino widget. */
export class AnalystPanel extends ReactWidget {
  readonly services: IAnalystServices;
  readonly area: PanelArea;
  private _submitOnEnter: boolean;
  private _listRefreshMs: number | undefined = undefined;
  private _opening: IThreadRequest | null = null;
  private _focusRequest = 0;

  constructor(options: IAnalystPanelOptions = {}) {
    super();
    const given = options.services ?? {};
    this.services = {
      client: given.client ?? new AnalystClient(),
      // Everything the panel renders is the model's: one registry makes it all inert.
      rendermime: given.rendermime ? untrustedRendermime(given.rendermime) : null,
      commands: given.commands ?? null,
      notebooks: given.notebooks ?? null
    };
    this._submitOnEnter = options.submitOnEnter ?? true;
    this.area = options.area ?? 'sidebar';
    this.id = this.area === 'main' ? MAIN_PANEL_ID : PANEL_ID;
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

  /** How often the shown thread list is read again, in ms (the settings' `threadListRefresh`). */
  get listRefreshMs(): number | undefined {
    return this._listRefreshMs;
  }

  set listRefreshMs(value: number | undefined) {
    if (value !== this._listRefreshMs) {
      this._listRefreshMs = value;
      this.update();
    }
  }

  /** Open the thread `threadId` (the list is read again first, so a thread made elsewhere is found). */
  openThread(threadId: string): void {
    this._opening = { threadId, serial: (this._opening?.serial ?? 0) + 1 };
    this.update();
  }

  /** Put the cursor in the prompt box of the open thread (with none open, in "New thread"). */
  focusPrompt(): void {
    this._focusRequest += 1;
    this.update();
  }

  /** The API client of the panel. */
  get client(): AnalystClient {
    return this.services.client;
  }

  protected render(): JSX.Element {
    return (
      <AnalystContext.Provider value={this.services}>
        <Sidebar
          client={this.services.client}
          submitOnEnter={this._submitOnEnter}
          listRefreshMs={this._listRefreshMs}
          area={this.area}
          opening={this._opening}
          focusRequest={this._focusRequest}
        />
      </AnalystContext.Provider>
    );
  }
}
