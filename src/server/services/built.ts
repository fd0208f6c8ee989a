/** A service as the composition root holds it: the value its users get, and how it is closed. */
export type Built<T> = { value: T; close?: () => unknown };
