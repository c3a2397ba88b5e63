import {removeCommandFor} from '../../src/cli/topology-commands.js'

export default removeCommandFor('row')
