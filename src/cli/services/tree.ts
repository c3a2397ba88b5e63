/**
 * Provider trees with inventory and usage per provider: a nested structure for
 * --json/--yaml and rows with box-drawing prefixes for tables.
 */
import type {PlacementClient} from '../../client/client.js'
import type {ProviderRecord} from '../../core/wire.js'
import {compareResourceClasses} from '../../core/listing-order.js'
import {loadStandard} from '../backend/standard-reads.js'
import {capacity} from './inventory.js'
import {resolveProvider} from '../backend/provider-lookup.js'

export interface TreeNode extends Omit<ProviderRecord, 'traits' | 'aggregates'> {
  children: TreeNode[]
}

/** The trees (all of them, or the one holding `ref`), children sorted by name. */
export async function loadTrees(client: PlacementClient, ref?: string, concurrency = 16): Promise<TreeNode[]> {
  const inTree = ref ? (await resolveProvider(client, ref)).uuid : undefined
  const cloud = await loadStandard(client, {
    inTree,
    concurrency,
    parts: {inventories: true, usages: true, traits: false, aggregates: false},
  })
  const nodes = new Map<string, TreeNode>()
  for (const {traits: _t, aggregates: _a, ...p} of cloud.providers.values()) nodes.set(p.uuid, {...p, children: []})
  const roots: TreeNode[] = []
  for (const n of nodes.values()) {
    const parent = n.parent_provider_uuid ? nodes.get(n.parent_provider_uuid) : undefined
    if (parent) parent.children.push(n)
    else roots.push(n)
  }
  const byName = (a: TreeNode, b: TreeNode) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.uuid < b.uuid ? -1 : 1)
  const sort = (list: TreeNode[]) => {
    list.sort(byName)
    for (const n of list) sort(n.children)
  }
  sort(roots)
  return roots
}

export interface TreeRow {
  tree: string
  uuid: string
  name: string
  generation: number | ''
  resource_class: string
  used: number | ''
  capacity: number | ''
  free: number | ''
  total: number | ''
  reserved: number | ''
  allocation_ratio: number | ''
  min_unit: number | ''
  max_unit: number | ''
  step_size: number | ''
}

/** One row per provider and class; the first row of a provider carries its name drawn in the tree. */
export function treeRows(roots: TreeNode[]): TreeRow[] {
  const rows: TreeRow[] = []
  const walk = (n: TreeNode, lead: string, branch: string, cont: string) => {
    const classes = Object.keys(n.inventories).sort(compareResourceClasses)
    const below = n.children.length ? '│ ' : '  '
    const first = classes.length ? classes : ['']
    first.forEach((rc, i) => {
      const inv = n.inventories[rc]
      const used = rc ? (n.usages[rc] ?? 0) : ''
      const cap = inv ? capacity(inv) : ''
      rows.push({
        tree: i === 0 ? lead + branch + n.name : lead + cont + below,
        uuid: i === 0 ? n.uuid : '',
        name: n.name,
        generation: i === 0 ? n.generation : '',
        resource_class: rc,
        used,
        capacity: cap,
        free: inv && typeof used === 'number' && typeof cap === 'number' ? cap - used : '',
        total: inv?.total ?? '',
        reserved: inv?.reserved ?? '',
        allocation_ratio: inv?.allocation_ratio ?? '',
        min_unit: inv?.min_unit ?? '',
        max_unit: inv?.max_unit ?? '',
        step_size: inv?.step_size ?? '',
      })
    })
    n.children.forEach((c, i) => {
      const last = i === n.children.length - 1
      walk(c, lead + cont, last ? '└─ ' : '├─ ', last ? '   ' : '│  ')
    })
  }
  for (const r of roots) walk(r, '', '', '')
  return rows
}
