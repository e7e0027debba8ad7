/**
 * Reading a result's JSON with care: each value only when it is of the kind expected, so a
 * result of an unexpected shape gives a thinner view, never a broken one.
 */

import type { JsonObject } from '../events';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function objects(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

export function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Drops the keys whose value is undefined (views carry only what the result said). */
export function defined<T extends object>(view: T): T {
  const out: { [key: string]: unknown } = {};
  for (const [key, value] of Object.entries(view)) {
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out as T;
}

/** Name and type of each column that has a name. */
export function columns(value: unknown): { name: string; type: string }[] {
  const out: { name: string; type: string }[] = [];
  for (const c of objects(value)) {
    const name = text(c.name);
    if (name !== undefined) {
      out.push({ name, type: text(c.type) ?? '' });
    }
  }
  return out;
}

/** Whether `result` holds any of `keys`. */
export function holds(result: object, ...keys: string[]): boolean {
  return keys.some(k => k in result);
}
