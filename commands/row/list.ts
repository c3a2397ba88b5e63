import {listCommandFor} from '../../src/cli/topology/node-commands.js'

export default listCommandFor('row')
