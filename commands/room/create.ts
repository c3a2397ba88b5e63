import {createCommandFor} from '../../src/cli/topology-commands.js'

export default createCommandFor('room')
