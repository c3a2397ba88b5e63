/** Amounts of resources as one table cell, in listing order (core/listing-order.ts). */
import {orderedResources} from '../../core/listing-order.js'

/** "VCPU=2,MEMORY_MB=1024" for tables. */
export const formatResources = (r: Record<string, number> | undefined) =>
  orderedResources(r ?? {})
    .map(([rc, n]) => `${rc}=${n}`)
    .join(',')
