/**
 * The stores refuse by throwing hermesd's named errors. Tests that compare a call's outcome
 * with an object read it through `settled`: the result, or the refusal as
 * `{ success: false, error, code, kind, ...details }` (the error's message, wire code, its
 * class — invalid, not-found, conflict, refused — and details).
 */
import { HermesError } from '../../src/errors/index.js';

type Loose = { success: boolean; error?: any; code?: string; [key: string]: any };
export type Settled<T> = T & Loose;

/** The class of refusal, named as the skills store named it before it threw. */
const KIND: Record<string, string> = {
  'bad-request': 'invalid',
  'not-found': 'not-found',
  conflict: 'conflict',
  refused: 'refused',
  'memory-refused': 'refused',
};

function refusal(err: unknown): Loose {
  if (!(err instanceof HermesError)) throw err;
  const details = err.details && typeof err.details === 'object' ? (err.details as Record<string, unknown>) : {};
  return { success: false, error: err.message, code: err.code, kind: KIND[err.code] ?? err.code, ...details };
}

export function settled<T>(fn: () => Promise<T>): Promise<Settled<T>>;
export function settled<T>(fn: () => T): Settled<T>;
export function settled<T>(fn: () => T | Promise<T>): Settled<T> | Promise<Settled<T>> {
  try {
    const v = fn();
    if (v instanceof Promise)
      return v.then(
        (r) => r as Settled<T>,
        (err: unknown) => refusal(err) as Settled<T>,
      );
    return v as Settled<T>;
  } catch (err) {
    return refusal(err) as Settled<T>;
  }
}
