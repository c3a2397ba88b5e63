/** The store's guarantees (test/helpers/store-behaviour.ts) on MariaDB, as on PostgreSQL. */
import {afterAll, it} from 'vitest'
import {mariadbAvailable, startMariadb, type TestMariadb} from '../helpers/mariadb.js'
import {describeStore} from '../helpers/store-behaviour.js'

let server: Promise<TestMariadb> | undefined
afterAll(async () => (await server)?.stop())

if (mariadbAvailable) describeStore('MariaDB', async () => (await (server ??= startMariadb())).placematDatabase())
else it.skip('needs MariaDB server binaries (apt-get install mariadb-server)')
