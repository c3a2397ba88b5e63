import {addCommandFor} from '../../src/cli/topology-commands.js'

export default addCommandFor('rack')
