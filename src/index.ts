import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, MainAreaWidget } from '@jupyterlab/apputils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { AnalystClient } from './transport/api';
import { AREA_COMMANDS, PROMPT_COMMAND } from './components/Sidebar';
import { AnalystPanel } from './widgets/AnalystPanel';
import { AreaMemory } from './widgets/panelArea';
import { listenForThreadLinks } from './widgets/threadLinks';

const PLUGIN_ID = 'jupyter-analyst:plugin';

/** Commands of the extension. */
export namespace CommandIDs {
  export const open = 'jupyter-analyst:open';
}

/** Where the panel sits among the right sidebar's tabs (after the debugger's 1000). */
const SIDEBAR_RANK = 1100;

/**
 * The "Data analyst" sidebar: threads, turns and their events, from the
 * jupyter-analyst server extension's API.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'The Data analyst panel of the right sidebar.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [ILayoutRestorer, ICommandPalette, ISettingRegistry, INotebookTracker, ILabShell],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    settingRegistry: ISettingRegistry | null,
    notebooks: INotebookTracker | null,
    labShell: ILabShell | null
  ) => {
    // The page's server settings (ServerConnection.makeSettings()): base URL, token, XSRF.
    const client = new AnalystClient(app.serviceManager.serverSettings);
    const panel = new AnalystPanel({
      services: { client, rendermime, commands: app.commands, notebooks }
    });
    app.shell.add(panel, 'right', { rank: SIDEBAR_RANK });
    restorer?.add(panel, 'jupyter-analyst');

    app.commands.addCommand(CommandIDs.open, {
      label: 'Open the Data analyst panel',
      caption: 'Ask questions about your data',
      describedBy: {
        args: {
          type: 'object',
          properties: {
            thread: { type: 'string', description: 'The id of a thread to open in the panel' }
          }
        }
      },
      execute: args => {
        app.shell.activateById(panel.id);
        if (typeof args.thread === 'string' && args.thread) {
          panel.openThread(args.thread);
        }
      }
    });
    palette?.addItem({ command: CommandIDs.open, category: 'Data analyst' });
    // A chat's link to a thread (`#jupyter-analyst-thread=ID`) opens it here without the
    // command linker's trust dialog (see widgets/threadLinks.ts); the shell first restored.
    void app.restored.then(() =>
      listenForThreadLinks(threadId => {
        void app.commands.execute(CommandIDs.open, { thread: threadId });
      })
    );

    // The same panel with room to read: a tab of the main area. It opens on the thread the
    // sidebar had open (the open thread is remembered per server), and goes back on demand.
    let main: MainAreaWidget<AnalystPanel> | null = null;
    // Where the user last put it: the settings, once loaded (the sidebar until then).
    let area = new AreaMemory(null);
    const remember = (place: 'sidebar' | 'main'): void => {
      area.remember(place).catch(reason => {
        console.error('jupyter-analyst: where the panel is could not be saved', reason);
      });
    };
    app.commands.addCommand(AREA_COMMANDS.main, {
      label: 'Open the Data analyst panel in the main area',
      caption: 'Room to read wide tables and charts',
      execute: () => {
        if (main === null || main.isDisposed) {
          const content = new AnalystPanel({
            services: { client, rendermime, commands: app.commands, notebooks },
            submitOnEnter: panel.submitOnEnter,
            area: 'main'
          });
          content.listRefreshMs = panel.listRefreshMs;
          main = new MainAreaWidget({ content });
          main.id = `${content.id}-tab`;
          main.title.label = 'Data analyst';
          main.title.icon = panel.title.icon;
          main.title.closable = true;
          // Closed by its tab's ✕ or "Back to the sidebar": the sidebar is its place again.
          main.disposed.connect(() => remember('sidebar'));
          app.shell.add(main, 'main');
        }
        remember('main');
        app.shell.activateById(main.id);
        // The room is the point: the narrow copy steps aside (it comes back with the panel).
        labShell?.collapseRight();
      }
    });
    app.commands.addCommand(AREA_COMMANDS.sidebar, {
      label: 'Move the Data analyst panel back to the sidebar',
      execute: () => {
        main?.dispose();
        main = null;
        app.shell.activateById(panel.id);
      }
    });
    palette?.addItem({ command: AREA_COMMANDS.main, category: 'Data analyst' });

    // From anywhere in JupyterLab to the question: the panel opened (where it is shown: the
    // main area's copy when there is one) and the cursor in its prompt box. Its key is
    // Accel Shift Y (schema/plugin.json): none of JupyterLab's own bindings, nor
    // jupyterlab-chat's Accel Shift 1, nor one a browser keeps from pages.
    app.commands.addCommand(PROMPT_COMMAND, {
      label: 'Ask the Data analyst',
      caption: 'Open the Data analyst panel with the cursor in its prompt box',
      execute: () => {
        const target = main !== null && !main.isDisposed ? main : null;
        app.shell.activateById(target?.id ?? panel.id);
        (target?.content ?? panel).focusPrompt();
      }
    });
    palette?.addItem({ command: PROMPT_COMMAND, category: 'Data analyst' });

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          area = new AreaMemory(settings);
          // Back where the user left it: in the main area after a reload when moved there.
          if (area.area === 'main') {
            void app.restored.then(() => app.commands.execute(AREA_COMMANDS.main));
          }
          const apply = (): void => {
            panel.submitOnEnter = settings.get('submitOnEnter').composite as boolean;
            panel.listRefreshMs = (settings.get('threadListRefresh').composite as number) * 1000;
            if (main !== null && !main.isDisposed) {
              main.content.submitOnEnter = panel.submitOnEnter;
              main.content.listRefreshMs = panel.listRefreshMs;
            }
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error('jupyter-analyst: the settings could not be loaded', reason);
        });
    }
  }
};

export default plugin;
