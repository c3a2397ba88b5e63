/**
 * The command line's one error model. Services and commands throw a `Failure` (what went
 * wrong, in words, and its kind), or let a domain error (PlacementError) or an API answer
 * (ApiError) through; `exitCodeOf` is the one place that turns any of them into the exit
 * code a script sees.
 */
import {ApiError, UnreachableError} from '../client/client.js'
import {AuthenticationError, NoEndpointError} from '../client/openstack/session.js'
import {PlacementError} from '../core/errors.js'
import {ForeignDatabaseError} from '../store/target.js'

/** Exit codes every command keeps (documented in README.md, "Exit codes"). */
export const ExitCode = {
  OK: 0,
  ERROR: 1,
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  UNREACHABLE: 5,
  BAD_REQUEST: 6,
  /** 401: no token, or one the endpoint does not take. */
  UNAUTHORIZED: 10,
  /** 403: the token is good but may not do this (not an admin). */
  FORBIDDEN: 11,
  /** A bug in placemat (sysexits' EX_SOFTWARE), never the user's mistake. */
  BUG: 70,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export type FailureKind = 'error' | 'usage' | 'not_found' | 'conflict' | 'bad_request'

const KIND_EXIT: Record<FailureKind, ExitCodeValue> = {
  error: ExitCode.ERROR,
  usage: ExitCode.USAGE,
  not_found: ExitCode.NOT_FOUND,
  conflict: ExitCode.CONFLICT,
  bad_request: ExitCode.BAD_REQUEST,
}

/**
 * A failure of the command line itself (bad arguments or files, a state it refuses), never an
 * HTTP answer. Its exit code is its kind's, unless it carries one of its own (a detached daemon's,
 * passed on).
 */
export class Failure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly exit?: number,
  ) {
    super(message)
    this.name = 'Failure'
  }
}

export const usageError = (message: string) => new Failure('usage', message)
export const notFoundError = (message: string) => new Failure('not_found', message)
export const conflictError = (message: string) => new Failure('conflict', message)
export const badRequestError = (message: string) => new Failure('bad_request', message)
export const failure = (message: string) => new Failure('error', message)

function exitOfStatus(status: number): ExitCodeValue {
  if (status === 401) return ExitCode.UNAUTHORIZED
  if (status === 403) return ExitCode.FORBIDDEN
  if (status === 404) return ExitCode.NOT_FOUND
  if (status === 409) return ExitCode.CONFLICT
  if (status === 400) return ExitCode.BAD_REQUEST
  return ExitCode.ERROR
}

/**
 * An error no part of placemat meant to raise: the engine's own (a property of undefined, a
 * stack overflow, an unknown name). Everything placemat says on purpose is a Failure, an
 * answer, or an operating-system error with its code.
 */
export function isBug(err: unknown): err is Error {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError
}

/** The exit code of any error a command can end with. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof Failure) return err.exit ?? KIND_EXIT[err.kind]
  if (err instanceof ApiError || err instanceof PlacementError) return exitOfStatus(err.status)
  if (err instanceof ForeignDatabaseError) return ExitCode.USAGE
  if (err instanceof UnreachableError || err instanceof NoEndpointError) return ExitCode.UNREACHABLE
  if (err instanceof AuthenticationError) return ExitCode.UNAUTHORIZED
  const oclifExit = (err as {oclif?: {exit?: number}})?.oclif?.exit
  if (typeof oclifExit === 'number') return oclifExit
  return isBug(err) ? ExitCode.BUG : ExitCode.ERROR
}

/**
 * The one line a command prints for an error (after "placemat: "). An answer's status leads it
 * ("409 [placement.concurrent_update]: ..."), but a 404's: "not found" reads the same whether the
 * command line found nothing (a Failure) or the endpoint answered so, and exit 3 says which.
 */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError || err instanceof PlacementError) {
    const code = err.code && err.code !== 'placement.undefined_code' ? `[${err.code}]` : ''
    if (err.status === 404) return `${code ? `${code}: ` : ''}${withoutSchemaDump(err.detail)}`
    return `${err.status}${code ? ` ${code}` : ''}: ${withoutSchemaDump(err.detail)}`
  }
  return withoutSchemaDump((err as Error)?.message ?? String(err))
}

/** A JSON-schema failure says what is wrong first; the schema and instance dumps after it are for developers. */
export const withoutSchemaDump = (text: string) => text.replace(/\s+Failed validating '[\s\S]*$/, '')

/**
 * What a command ends with for `err`: its one line and exit code; null for oclif's own
 * exits and its parse errors, which keep oclif's handling (and its help text).
 */
export function failureReport(err: unknown, env: NodeJS.ProcessEnv = process.env): {message: string; exit: number} | null {
  const oclif = err as {oclif?: {exit?: number}; parse?: unknown; code?: string}
  if (oclif?.code === 'EEXIT' || (oclif?.oclif && 'parse' in (oclif as object))) return null
  if (isBug(err)) {
    // Told apart from the user's mistakes, with the way to see where it happened.
    const where = env.PLACEMAT_DEBUG ? `\n${err.stack ?? ''}` : ' (PLACEMAT_DEBUG=1 shows where)'
    return {message: `a bug in placemat, please report it: ${err.name}: ${err.message}${where}`, exit: ExitCode.BUG}
  }
  return {message: messageOf(err), exit: exitCodeOf(err)}
}

/** An error carrying the same code and exit as `err`, with more said in front of its detail. */
export function withContext(err: ApiError, prefix: string, suffix = ''): ApiError {
  return new ApiError(err.status, `${prefix}${err.detail}${suffix}`, err.code, err.method, err.path)
}
