import {deleteCommandFor} from '../../src/cli/topology-commands.js'

export default deleteCommandFor('row')
