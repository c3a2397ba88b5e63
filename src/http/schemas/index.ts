/**
 * Every request schema, Placement's (one module per placement/schemas/*.py) and placemat's
 * own, for readers that want them all (the schema tests). Routes import the module of their
 * resource.
 */
export * from './common.js'
export * from './resource-provider.js'
export * from './inventory.js'
export * from './aggregate.js'
export * from './trait.js'
export * from './resource-class.js'
export * from './allocation.js'
export * from './reshaper.js'
export * from './usage.js'
export * from './allocation-candidate.js'
export * from './batch.js'
export * from './consumer.js'
export * from './topology.js'
export * from './claim.js'
export * from './group.js'
export * from './host.js'
export * from './make-room.js'
