import {showCommandFor} from '../../src/cli/topology/node-commands.js'

export default showCommandFor('room')
