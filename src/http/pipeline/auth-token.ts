/**
 * `--auth token`: one admin token, compared in constant time; whoever presents it is the
 * policy's local admin. Public routes need none.
 */
import {createHash, timingSafeEqual} from 'node:crypto'
import type {Policy} from '../policy/policy.js'
import {isPublic, presentedToken, unauthenticated, type Step} from './step.js'

const digest = (token: string) => createHash('sha256').update(token).digest()

export function authToken(adminToken: string, policy: Policy): Step {
  const adminDigest = digest(adminToken)
  // Digests have one length, so the comparison takes as long whatever is presented.
  const matches = (presented: string) => timingSafeEqual(digest(presented), adminDigest)
  return (req, reply) => {
    if (isPublic(req)) return true
    const token = presentedToken(req)
    if (token === undefined || !matches(token)) return unauthenticated(req, reply)
    req.credentials = policy.localAdmin
    return true
  }
}
