/** placemat's hosts (under /placemat/v1/hosts). Not part of Placement. */
import type {Schema} from './common.js'

/** PUT /placemat/v1/hosts/{uuid}/status. */
export interface HostStatusPutBody {
  disabled: boolean
  reason?: string | null
  resource_provider_generation?: number
}

/** PUT /placemat/v1/hosts/{uuid}/status: a host out of service (with why) or back in. */
export const HOST_STATUS_PUT: Schema<HostStatusPutBody> = {
  type: 'object',
  properties: {
    disabled: {type: 'boolean'},
    reason: {type: ['string', 'null'], maxLength: 255},
    resource_provider_generation: {type: 'integer'},
  },
  required: ['disabled'],
  additionalProperties: false,
}
