import {cacheHeaders, type RouteDef} from '../context.js'
import {maxVersionString, minVersionString} from '../microversion.js'

export const routes: RouteDef[] = [
  {
    method: 'GET',
    url: '/',
    public: true,
    handler(ctx) {
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
