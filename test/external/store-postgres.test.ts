/** The store's guarantees (test/helpers/store-behaviour.ts) on PostgreSQL. */
import {afterAll, it} from 'vitest'
import {describeStore} from '../helpers/store-behaviour.js'
import {postgresAvailable, startPostgres, type TestPostgres} from '../helpers/postgres.js'

let pgServer: Promise<TestPostgres> | undefined
afterAll(async () => (await pgServer)?.stop())

if (postgresAvailable) describeStore('PostgreSQL', async () => (await (pgServer ??= startPostgres())).database())
else it.skip('needs PostgreSQL server binaries (apt-get install postgresql) or PLACEMAT_TEST_PG_URL')
