import {reshape} from '../../core/placement/reshaper.js'
import {readJson, type RouteDef} from '../context.js'
import {reshaperPostSchema} from '../schemas/reshaper.js'

export const routes: RouteDef[] = [
  {
    method: 'POST',
    url: '/reshaper',
    minVersion: 30,
    body: true,
    async handler(ctx) {
      const body = readJson(ctx, reshaperPostSchema(ctx.mv))
      await ctx.store.write((s, now) => reshape(s, now, body, {consumerTypes: ctx.mv.gte(38)}))
      ctx.reply.code(204)
      return undefined
    },
  },
]
