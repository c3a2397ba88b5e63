/**
 * The YAML parser, loaded on the first file read (a policy or flavor file), not with every
 * daemon: some 50 ms of its start.
 */
import {createRequire} from 'node:module'

export const yaml = (): typeof import('yaml') => createRequire(import.meta.url)('yaml') as typeof import('yaml')
