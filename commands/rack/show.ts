import {showCommandFor} from '../../src/cli/topology-commands.js'

export default showCommandFor('rack')
