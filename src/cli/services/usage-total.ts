/**
 * `usage total`: GET /usages as Placement answers it, and the lines the command line prints
 * from it (core/placement/usages.ts decides them). From 1.38 each line counts the consumers holding its
 * class, which GET /usages does not say (its consumer_count is the whole type's): those come
 * from the project's consumers, as the backend lists them.
 */
import {usageTotalRows, type UsageTotalRow} from '../../core/placement/usages.js'
import type {Endpoint} from '../backend/backend.js'
import {listConsumers} from './consumers.js'

export interface UsageQuery {
  project: string
  user?: string
  consumerType?: string
}

export interface UsageTotal {
  /** GET /usages' body. */
  body: {usages: Record<string, number | Record<string, number>>}
  /** Its lines (only when asked for). */
  rows: UsageTotalRow[]
  /** Whether usages are grouped by consumer type (1.38 and later). */
  grouped: boolean
}

export async function usageTotal(endpoint: Endpoint, q: UsageQuery, opts: {rows: boolean}): Promise<UsageTotal> {
  const body = await endpoint.client.get<UsageTotal['body']>('/usages', {
    query: {project_id: q.project, user_id: q.user, consumer_type: q.consumerType},
  })
  const grouped = Object.values(body.usages).some((v) => typeof v === 'object' && v !== null)
  if (!opts.rows) return {body, rows: [], grouped}
  const holders = grouped ? (await listConsumers(await endpoint.backend(), {project: q.project})).consumers : []
  return {body, rows: usageTotalRows(body.usages, {userId: q.user, consumerType: q.consumerType}, holders), grouped}
}
