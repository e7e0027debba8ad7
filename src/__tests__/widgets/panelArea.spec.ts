/**
 * Where the panel lives is kept in the extension's settings (schema/plugin.json): a real
 * SettingRegistry, over an in-memory store standing for the server's user settings,
 * validates what is saved against the schema; a registry made again over the same store
 * (a reload) reads the place back.
 */

import { ISettingRegistry, SettingRegistry } from '@jupyterlab/settingregistry';
import { DataConnector } from '@jupyterlab/statedb';

import { AreaMemory, areaOf } from '../../widgets/panelArea';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const SCHEMA = require('../../../schema/plugin.json') as ISettingRegistry.ISchema;
const PLUGIN_ID = 'jupyter-analyst:plugin';

/** The server's user settings, kept between registries as the server keeps them between reloads. */
class UserSettings extends DataConnector<ISettingRegistry.IPlugin, string> {
  raw = '{}';

  async fetch(id: string): Promise<ISettingRegistry.IPlugin> {
    return { id, raw: this.raw, schema: SCHEMA, data: { composite: {}, user: {} }, version: '1' };
  }

  async list(): Promise<{ ids: string[]; values: ISettingRegistry.IPlugin[] }> {
    return { ids: [PLUGIN_ID], values: [await this.fetch(PLUGIN_ID)] };
  }

  async save(_id: string, raw: string): Promise<void> {
    this.raw = raw;
  }
}

async function loaded(store: UserSettings): Promise<AreaMemory> {
  const registry = new SettingRegistry({ connector: store });
  return new AreaMemory(await registry.load(PLUGIN_ID));
}

describe('where the panel lives', () => {
  it('reads anything but "main" as the sidebar', () => {
    expect(areaOf('main')).toBe('main');
    expect(areaOf('sidebar')).toBe('sidebar');
    expect(areaOf(undefined)).toBe('sidebar');
    expect(areaOf('elsewhere')).toBe('sidebar');
  });

  it('is the sidebar at first, and where the user last put it after a reload', async () => {
    const store = new UserSettings();
    const first = await loaded(store);
    expect(first.area).toBe('sidebar');
    await first.remember('main');
    expect(store.raw).toMatch(/"area": "main"/);

    const reloaded = await loaded(store);
    expect(reloaded.area).toBe('main');
    await reloaded.remember('sidebar');
    expect((await loaded(store)).area).toBe('sidebar');
  });

  it('is the sidebar, and remembers nothing, without settings', async () => {
    const none = new AreaMemory(null);
    await none.remember('main');
    expect(none.area).toBe('sidebar');
  });
});
