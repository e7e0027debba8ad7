/**
 * The key binding of a command, as people read it and as `aria-keyshortcuts` says it, kept
 * up to date: the user may change it in JupyterLab's settings, and the bindings of the
 * settings arrive after the panel first renders.
 */

import { CommandRegistry } from '@lumino/commands';
import { useEffect, useState } from 'react';

/** A command's first key binding. */
export interface IShortcut {
  /** As the command palette shows it on this system: "Ctrl+Shift+Y", "⇧⌘Y". */
  label: string;
  /** As `aria-keyshortcuts` wants it: "Control+Shift+Y". */
  aria: string;
}

/** The names `aria-keyshortcuts` gives the modifiers Lumino writes. */
const ARIA_MODIFIERS: Record<string, string> = { Ctrl: 'Control', Cmd: 'Meta' };

/**
 * The shortcut of a one-chord binding (Lumino's normalised keys), or null for none.
 *
 * ```ts
 * ariaKeys(['Ctrl Shift Y']); // 'Control+Shift+Y'
 * ariaKeys(['Ctrl K', 'Ctrl B']); // null: a sequence of chords has no aria form
 * ```
 */
export function ariaKeys(keys: readonly string[]): string | null {
  if (keys.length !== 1 || !keys[0].trim()) {
    return null;
  }
  return keys[0]
    .trim()
    .split(/\s+/)
    .map(part => ARIA_MODIFIERS[part] ?? part)
    .join('+');
}

function shortcutOf(commands: CommandRegistry | null, command: string): IShortcut | null {
  const binding = commands?.keyBindings.find(b => b.command === command);
  const aria = binding ? ariaKeys(binding.keys) : null;
  if (!binding || aria === null) {
    return null;
  }
  return { label: CommandRegistry.formatKeystroke(binding.keys), aria };
}

/** The shortcut of `command` in `commands` (null outside JupyterLab, or when it has none). */
export function useShortcut(commands: CommandRegistry | null, command: string): IShortcut | null {
  const [shortcut, setShortcut] = useState(() => shortcutOf(commands, command));
  useEffect(() => {
    if (commands === null) {
      return;
    }
    const update = (): void => setShortcut(shortcutOf(commands, command));
    update();
    commands.keyBindingChanged.connect(update);
    return () => {
      commands.keyBindingChanged.disconnect(update);
    };
  }, [commands, command]);
  return shortcut;
}
