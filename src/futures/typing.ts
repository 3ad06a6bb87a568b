// The types that follow a value from a task function to its Future and back
// out of gather: what a call returns (awaited), what its arguments may be (a
// value, or a Future of one, anywhere inside arrays and plain objects), and
// what gather gives for the shape it is handed.

import type { ModuleRef } from '../wire/functions'
import type { Future } from './future'

type AnyFn = (...args: any[]) => any

/** Whether `T` is `any` (which would otherwise spread into every branch). */
type IsAny<T> = 0 extends 1 & T ? true : false

/** The function a task function stands for: itself, or a typed reference's export. */
export type FunctionOf<F> = F extends AnyFn ? F : F extends ModuleRef<infer G> ? (G extends AnyFn ? G : AnyFn) : AnyFn

/** What a task's Future holds: the function's return value, awaited. */
export type ResultOf<F> = Awaited<ReturnType<FunctionOf<F>>>

/** Values passed as they are: never searched for Futures. */
type Leaf = Function | Date | RegExp | Error | ArrayBuffer | ArrayBufferView | Map<any, any> | Set<any> | Promise<any>

/** A value for a parameter of type `T`: the value, a Future of it, or arrays and objects of those. */
export type Resolvable<T> =
  IsAny<T> extends true
    ? any
    : T | Future<T> | (T extends Leaf ? never : T extends readonly unknown[] ? { [K in keyof T]: Resolvable<T[K]> } : T extends object ? { [K in keyof T]: Resolvable<T[K]> } : never)

/** The arguments of `P`'s parameters, each resolvable. */
export type ResolvableArgs<P extends readonly unknown[]> = { [K in keyof P]: Resolvable<P[K]> }

/** The arguments `submit` takes for `F`. */
export type ArgsOf<F> = ResolvableArgs<Parameters<FunctionOf<F>>>

/** `submit`'s arguments after the function: `args` may be left out when the function needs none. */
export type SubmitRest<F, O> = [] extends Parameters<FunctionOf<F>> ? [args?: ArgsOf<F>, options?: O] : [args: ArgsOf<F>, options?: O]

/** What `gather` gives for `T`: every Future replaced by its value, in the same shape. */
export type Gathered<T> =
  IsAny<T> extends true
    ? any
    : T extends Future<infer U>
      ? U
      : T extends Leaf
        ? T
        : T extends readonly unknown[]
          ? { -readonly [K in keyof T]: Gathered<T[K]> }
          : T extends object
            ? { -readonly [K in keyof T]: Gathered<T[K]> }
            : T

/** A task function of this signature: the function itself, or a reference to a module export of it. */
export type TaskFn<Sig extends AnyFn> = Sig | ModuleRef<Sig>


/** map's iterables for `F`: one per parameter, each of values (or Futures) for it. */
export type MapIterables<F> = IterablesOf<Parameters<FunctionOf<F>>>

/** An iterable of values (or Futures) for each parameter of `P`. */
export type IterablesOf<P extends readonly unknown[]> = { [K in keyof P]: Iterable<Resolvable<P[K]>> }

/** What scattering an array gives: a Future per element. */
export type ScatteredArray<A extends readonly unknown[]> = { -readonly [K in keyof A]: Future<A[K]> }

/** What scattering a plain object with `split: true` gives: a Future per property. */
export type ScatteredObject<T> = { -readonly [K in keyof T]: Future<T[K]> }
