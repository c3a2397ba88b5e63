/** The placement-group tests' topology: 3 rooms x 2 rows x 2 racks x 2 hosts (24 hosts). */
import type {Layout} from '../../src/core/topology.js'

/**
 * Hosts named `<prefix>-<room><row><rack><n>` (host-1212: room 1, row 2, rack 1, second host)
 * in racks `rack-<room><row><rack>`, rows `row-<room><row>`, rooms `room-<room>`.
 */
export function threeRooms(prefix: string): {hosts: string[]; layout: Layout} {
  const hosts: string[] = []
  const layout: Layout = {rooms: []}
  for (let m = 1; m <= 3; m++) {
    const rows = []
    for (let r = 1; r <= 2; r++) {
      const racks = []
      for (let k = 1; k <= 2; k++) {
        const names = [1, 2].map((n) => `${prefix}-${m}${r}${k}${n}`)
        hosts.push(...names)
        racks.push({name: `rack-${m}${r}${k}`, hosts: names})
      }
      rows.push({name: `row-${m}${r}`, racks})
    }
    layout.rooms!.push({name: `room-${m}`, rows})
  }
  return {hosts, layout}
}
