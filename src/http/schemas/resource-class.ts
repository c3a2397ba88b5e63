/** placement/schemas/resource_class.py: POST and PUT /resource_classes. */
import {CUSTOM_RC_PATTERN, clone, deepFreeze, type Schema} from './common.js'

/** POST /resource_classes; PUT /resource_classes/{name} (its body at 1.2-1.6, the path's name after). */
export interface ResourceClassBody {
  name: string
}

/** POST /resource_classes body (1.2+). */
export const RESOURCE_CLASS_POST: Schema<ResourceClassBody> = {
  type: 'object',
  properties: {
    name: {type: 'string', pattern: CUSTOM_RC_PATTERN, maxLength: 255},
  },
  required: ['name'],
  additionalProperties: false,
}

/** PUT /resource_classes/{name}: the body at 1.2-1.6; at 1.7+ a synthetic {"name": <path name>}. */
export const RESOURCE_CLASS_PUT: Schema<ResourceClassBody> = clone(RESOURCE_CLASS_POST)

deepFreeze(RESOURCE_CLASS_POST, RESOURCE_CLASS_PUT)
