/**
 * The policy a daemon runs with, from its flags over placement.conf's [oslo_policy] (a flag,
 * `--enforce-scope` or `--no-enforce-scope`, wins over the file's `enforce_scope`). What neither
 * says is left unset, for the policy to take its generation's default (policy.ts enforcement:
 * on with 15.0.0's rules, off with 8.0.0's).
 */
import type {PolicyOptions} from '../http/policy/policy.js'
import type {PolicyGeneration} from '../http/policy/defaults.js'

export interface PolicyFlags {
  'policy-file'?: string
  'policy-defaults'?: string
  'enforce-new-defaults'?: boolean
  'enforce-scope'?: boolean
}

export function policyOptionsOf(flags: PolicyFlags, file: PolicyOptions): PolicyOptions {
  return {
    defaults: flags['policy-defaults'] as PolicyGeneration | undefined,
    file: flags['policy-file'] ?? file.file,
    enforceNewDefaults: flags['enforce-new-defaults'] ?? file.enforceNewDefaults,
    enforceScope: flags['enforce-scope'] ?? file.enforceScope,
  }
}
