import {DatabaseUnavailableError} from '../../store/database-faults.js'
import {cacheHeaders, type RouteDef} from '../context.js'
import {maxVersionString, minVersionString} from '../microversion.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/',
    public: true,
    handler(ctx) {
      // A readiness probe's answer: not before the daemon can serve (its database answered).
      if (!ctx.store.ready) throw new DatabaseUnavailableError('starting')
      cacheHeaders(ctx)
      return {
        versions: [
          {
            id: `v${minVersionString()}`,
            max_version: maxVersionString(),
            min_version: minVersionString(),
            status: 'CURRENT',
            links: [{rel: 'self', href: ''}],
          },
        ],
      }
    },
  },
]
