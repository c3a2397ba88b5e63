/** The flags of `placemat candidates` and `placemat claim`: every GET /allocation_candidates query parameter, granular groups included. */
import {Flags} from '@oclif/core'

/** Help text: every line short enough that a help screen never breaks one (76 columns). */
export const GROUP_HELP = `Granular request groups (--group, repeatable):
  --group SUFFIX:KEY=VALUE[,KEY=VALUE...]
KEY is resources, required, member_of or in_tree (member-of and in-tree
too). A value runs up to the next KEY=, so commas inside values need no
quoting:
  --group _NET:resources=SRIOV_NET_VF:1,required=CUSTOM_PHYSNET0
  --group _ACCEL:resources=FPGA:1,member_of=rack:r12
become resources_NET=..., required_NET=..., member_of_ACCEL=... .
required= and member_of= may be given several times in one group (all must
hold); the same SUFFIX may be given in several --group flags. SUFFIX is
1-64 of [a-zA-Z0-9_-] (numbers work at any microversion). An empty group
(only required/member_of) must be named in --same-subtree, as Placement
asks.

Aggregates (--member-of, member_of=) are uuids, or placemat topology
names: rack:NAME, row:NAME, room:NAME, e.g. --member-of in:rack:r1,rack:r2
or --member-of '!row:r3'. A name that does not exist is an error (exit 3).

Topology affinity (LEVEL is rack, row or room; CONSUMER a consumer uuid,
or several separated by commas; each flag repeatable):
  --same rack:CONSUMER     in a rack that CONSUMER's hosts are in
  --different row:C1,C2    in none of the rows C1's and C2's hosts are in
  --near CONSUMER          same rack first, then row, then room, then the rest
  --far CONSUMER           the reverse
On placemat (daemon or --db) the topology is the daemon's; against plain
Placement give --layout FILE (the rooms/rows/racks document of
PUT /placemat/v1/topology/layout). The rules become member_of filters, and
every candidate is checked once more on the client. Against plain
Placement they hold when the candidates are read, not at the write.`

export const candidateFlags = {
  resources: Flags.string({description: 'the unsuffixed group: CLASS:AMOUNT,... e.g. VCPU:2,MEMORY_MB:4096', helpGroup: 'REQUEST'}),
  resource: Flags.string({
    description: "osc-placement's form: CLASS=AMOUNT (repeatable), the same as --resources CLASS:AMOUNT",
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  required: Flags.string({
    description: 'traits of the unsuffixed group: T1,!T2 or in:T1,T2 (repeatable: all must hold)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'member-of': Flags.string({
    description:
      'aggregates of the unsuffixed group: AGG, in:A,B (or A,B, as osc takes it), !AGG, !in:A,B (rack:NAME etc. allowed; repeatable)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'in-tree': Flags.string({description: 'the unsuffixed group from the tree of this provider (name or uuid)', helpGroup: 'REQUEST'}),
  group: Flags.string({
    description: 'a granular group: SUFFIX:resources=...,required=...,member_of=...,in_tree=... (repeatable; see below)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'group-policy': Flags.string({description: 'how granular groups share providers', options: ['none', 'isolate'], helpGroup: 'REQUEST'}),
  'same-subtree': Flags.string({
    description: 'suffixes whose providers must share a subtree: _A,_B (repeatable)',
    multiple: true,
    helpGroup: 'REQUEST',
  }),
  'root-required': Flags.string({description: 'traits of the root provider: T1,!T2', helpGroup: 'REQUEST'}),
  'include-disabled': Flags.boolean({
    description: "also hosts marked COMPUTE_STATUS_DISABLED (left out by default, as nova's scheduler leaves them out)",
    helpGroup: 'REQUEST',
  }),
  limit: Flags.integer({description: 'at most this many candidates', min: 1, helpGroup: 'REQUEST'}),
  same: Flags.string({
    description: 'LEVEL:CONSUMER[,CONSUMER...]: in the same rack/row/room as these consumers (repeatable)',
    multiple: true,
    helpGroup: 'TOPOLOGY',
  }),
  different: Flags.string({
    description: 'LEVEL:CONSUMER[,CONSUMER...]: in another rack/row/room than these consumers (repeatable)',
    multiple: true,
    helpGroup: 'TOPOLOGY',
  }),
  near: Flags.string({
    description: 'order: same rack as CONSUMER first, then row, then room, then the rest',
    exclusive: ['far'],
    helpGroup: 'TOPOLOGY',
  }),
  far: Flags.string({description: 'order: the reverse of --near', helpGroup: 'TOPOLOGY'}),
  layout: Flags.string({description: 'topology layout file (YAML/JSON) for a plain Placement endpoint', helpGroup: 'TOPOLOGY'}),
  groups: Flags.string({description: 'placement groups file for a plain Placement endpoint (--group NAME)', helpGroup: 'TOPOLOGY'}),
}

export interface CandidateFlagValues {
  resources?: string
  resource?: string[]
  required?: string[]
  'member-of'?: string[]
  'in-tree'?: string
  group?: string[]
  'group-policy'?: string
  'same-subtree'?: string[]
  'root-required'?: string
  'include-disabled'?: boolean
  limit?: number
  same?: string[]
  different?: string[]
  near?: string
  far?: string
  layout?: string
  groups?: string
}
