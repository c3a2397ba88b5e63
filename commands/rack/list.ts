import {listCommandFor} from '../../src/cli/topology-commands.js'

export default listCommandFor('rack')
