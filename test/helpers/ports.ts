/** A TCP port free on loopback for a server a test starts: scripts/lib/ports.mjs's, typed. */
import {freePort as free} from '../../scripts/lib/ports.mjs'

/** A TCP port free on loopback, below the kernel's ephemeral range (scripts/lib/ports.mjs says why). */
export const freePort = (): Promise<number> => free()
