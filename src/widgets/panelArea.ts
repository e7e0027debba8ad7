/**
 * Where the panel lives, kept across reloads: the right sidebar or a tab of the main area,
 * as the user last put it (its ⤢/⤡ button), in the extension's `area` setting
 * (schema/plugin.json): saved with the user's settings, so a reload, another tab or
 * another browser opens it where it was.
 */

import type { ISettingRegistry } from '@jupyterlab/settingregistry';

export type PanelArea = 'sidebar' | 'main';

/** The setting's name in schema/plugin.json. */
export const AREA_SETTING = 'area';

/**
 * A stored value as a place: anything but `main` is the sidebar (the default).
 *
 * ```ts
 * areaOf('main')    // 'main'
 * areaOf(undefined) // 'sidebar'
 * ```
 */
export function areaOf(value: unknown): PanelArea {
  return value === 'main' ? 'main' : 'sidebar';
}

/** The panel's place as the settings hold it; remembered as the user moves it. */
export class AreaMemory {
  constructor(private readonly _settings: ISettingRegistry.ISettings | null) {}

  /** Where the panel opens (the sidebar without settings). */
  get area(): PanelArea {
    return areaOf(this._settings?.get(AREA_SETTING).composite);
  }

  /** Remember `area`, once it is not already what the settings say. */
  async remember(area: PanelArea): Promise<void> {
    if (this._settings === null || this.area === area) {
      return;
    }
    await this._settings.set(AREA_SETTING, area);
  }
}
