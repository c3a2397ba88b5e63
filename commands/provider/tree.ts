import {Args} from '@oclif/core'
import {PlacematCommand, type Column} from '../../src/cli/placemat-command.js'
import {loadTrees, treeRows, type TreeRow} from '../../src/cli/services/tree.js'

export default class ProviderTree extends PlacematCommand {
  static summary = 'Show provider trees with the inventory and usage of each provider.'
  static description =
    'Without PROVIDER every tree is shown; with it, the tree that holds it. In a table each provider is drawn ' +
    'in its tree, one line per resource class (USED of CAPACITY = (total - reserved) * allocation_ratio). ' +
    'Other columns: uuid, name, generation, free, total, reserved, allocation_ratio, min_unit, max_unit, step_size.\n\n' +
    'JSON/YAML: {"trees": [NODE...]}, each NODE {uuid, name, generation, parent_provider_uuid, root_provider_uuid, ' +
    'inventories (as GET .../inventories), usages (as GET .../usages), children: [NODE...]}.'

  static examples = [
    '<%= config.bin %> provider tree',
    '<%= config.bin %> provider tree compute-1',
    '<%= config.bin %> provider tree compute-1 -c tree,resource_class,used,capacity,reserved',
    "<%= config.bin %> provider tree --json | jq '.trees[].children[].name'",
  ]

  static args = {provider: Args.string({description: 'a provider (uuid or name) of the tree to show'})}

  static columns: Column<TreeRow>[] = [
    {key: 'tree', header: 'provider'},
    {key: 'uuid'},
    {key: 'name'},
    {key: 'generation', align: 'right'},
    {key: 'resource_class', header: 'class'},
    {key: 'used', align: 'right'},
    {key: 'capacity', align: 'right'},
    {key: 'free', align: 'right'},
    {key: 'total', align: 'right'},
    {key: 'reserved', align: 'right'},
    {key: 'allocation_ratio', header: 'ratio', align: 'right'},
    {key: 'min_unit', align: 'right'},
    {key: 'max_unit', align: 'right'},
    {key: 'step_size', align: 'right'},
  ]

  static defaultColumns = ['tree', 'uuid', 'resource_class', 'used', 'capacity']

  async run(): Promise<void> {
    const {args} = await this.parse(ProviderTree)
    const client = await this.client()
    const trees = await loadTrees(client, args.provider)
    const cols = this.base.columns ? ProviderTree.columns : ProviderTree.columns.filter((c) => ProviderTree.defaultColumns.includes(c.key))
    this.output({trees}, treeRows(trees), cols)
  }
}
