/**
 * deploy/kubernetes, read offline: every document parses and is a kind we ship; the Deployment's
 * probes ask the health route on the container's port; the Service and the PodDisruptionBudget
 * select the API pods (and not the upgrade Job's); the drain fits in the grace period; the
 * database URL comes from a Secret and no password is written anywhere; every image is the one
 * deploy/image/build.sh tags; every flag in the containers' args is one the command takes. Each
 * object is also checked against Kubernetes' schema (kubernetes-models, a development
 * dependency) where that package is installed.
 */
import fs from 'node:fs'
import path from 'node:path'
import YAML from 'yaml'
import {describe, expect, it} from 'vitest'

const root = path.resolve(import.meta.dirname, '../..')
const dir = path.join(root, 'deploy/kubernetes')
const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version as string
const imageName = fs.readFileSync(path.join(root, 'deploy/image/build.sh'), 'utf8').match(/^name=(\S+)$/m)![1]
const imageUser = fs.readFileSync(path.join(root, 'deploy/image/Containerfile'), 'utf8').match(/^USER (\d+):(\d+)$/m)!
const HEALTH = '/placemat/v1/health'

const KINDS: Record<string, string> = {
  Deployment: 'apps/v1',
  Service: 'v1',
  PodDisruptionBudget: 'policy/v1',
  Job: 'batch/v1',
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
}

const yamlFiles = (d: string): string[] =>
  fs
    .readdirSync(d, {withFileTypes: true})
    .flatMap((e) => (e.isDirectory() ? yamlFiles(path.join(d, e.name)) : /\.ya?ml$/.test(e.name) ? [path.join(d, e.name)] : []))

// Kubernetes reads YAML 1.1 (0440 is octal there): read it the same way.
const docs = yamlFiles(dir).flatMap((file) =>
  YAML.parseAllDocuments(fs.readFileSync(file, 'utf8'), {version: '1.1'}).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0].message}`)
    return {file: path.relative(dir, file), obj: doc.toJS() as any}
  }),
)
const only = (kind: string) => {
  const found = docs.filter((d) => d.obj.kind === kind)
  expect(found, kind).toHaveLength(1)
  return found[0].obj
}
const deployment = only('Deployment')
const job = only('Job')
const podLabels = deployment.spec.template.metadata.labels
const container = deployment.spec.template.spec.containers[0]
const port = (p: number | string) => (typeof p === 'number' ? p : container.ports.find((c: any) => c.name === p)?.containerPort)
const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v)
const argValue = (args: string[], flag: string) => Number(args[args.indexOf(`--${flag}`) + 1])

describe('deploy/kubernetes', () => {
  it('holds only Kubernetes objects of the kinds and API versions placemat ships, each named', () => {
    expect(docs.map((d) => d.obj.kind).sort()).toEqual([
      'Deployment',
      'Job',
      'Kustomization',
      'Kustomization',
      'PodDisruptionBudget',
      'Service',
    ])
    for (const {file, obj} of docs) {
      expect(KINDS[obj.kind], `${file}: kind ${obj.kind}`).toBeDefined()
      expect(obj.apiVersion, file).toBe(KINDS[obj.kind])
      if (obj.kind !== 'Kustomization') expect(obj.metadata?.name, file).toMatch(/^placemat/)
    }
  })

  it('lists every manifest in a kustomization, the upgrade Job in one of its own', () => {
    const listed = docs
      .filter((d) => d.obj.kind === 'Kustomization')
      .flatMap((d) => d.obj.resources.map((r: string) => path.join(path.dirname(d.file), r)))
    const manifests = docs.filter((d) => d.obj.kind !== 'Kustomization').map((d) => d.file)
    expect(listed.sort()).toEqual([...new Set(manifests)].sort())
    const jobFile = docs.find((d) => d.obj.kind === 'Job')!.file
    expect(docs.find((d) => d.obj.kind === 'Deployment')!.file.split('/').length).toBe(1)
    expect(path.dirname(jobFile)).not.toBe('.')
  })

  it('runs three replicas whose probes ask the health route on the container port', () => {
    expect(deployment.spec.replicas).toBe(3)
    expect(selects(deployment.spec.selector.matchLabels, podLabels)).toBe(true)
    expect(container.ports).toEqual([{name: 'http', containerPort: 8778, protocol: 'TCP'}])
    expect(container.args.slice(0, 3)).toEqual(['daemon', 'start', '--foreground'])
    expect(argValue(container.args, 'port')).toBe(8778)
    for (const probe of ['startupProbe', 'readinessProbe']) {
      expect(container[probe].httpGet.path, probe).toBe(HEALTH)
      expect(port(container[probe].httpGet.port), probe).toBe(8778)
    }
    // Liveness asks the version document, which needs no database: an outage must not restart every pod.
    expect(container.livenessProbe.httpGet).toMatchObject({path: '/'})
    expect(port(container.livenessProbe.httpGet.port)).toBe(8778)
  })

  it('drains within the grace period: it is longer than the preStop sleep and the shutdown timeout (which holds the delay) together', () => {
    const preStop = container.lifecycle.preStop.sleep.seconds
    const delay = argValue(container.args, 'shutdown-delay')
    const timeout = argValue(container.args, 'shutdown-timeout')
    expect([preStop, delay, timeout].every((n) => Number.isInteger(n) && n > 0)).toBe(true)
    // The daemon refuses a delay that leaves the drain no time.
    expect(delay).toBeLessThan(timeout)
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStop + timeout)
  })

  it('runs as the image user, non-root, on a read-only root, with resources, in the Deployment and the Job', () => {
    for (const spec of [deployment.spec.template.spec, job.spec.template.spec]) {
      expect(spec.securityContext).toMatchObject({runAsNonRoot: true, runAsUser: Number(imageUser[1]), runAsGroup: Number(imageUser[2])})
      for (const c of spec.containers) {
        expect(c.securityContext, c.name).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: {drop: ['ALL']},
        })
        expect(c.resources.requests, c.name).toMatchObject({cpu: expect.anything(), memory: expect.anything()})
        expect(c.resources.limits.memory, c.name).toBeDefined()
        const mounts = c.volumeMounts.map((m: any) => m.mountPath)
        expect(mounts, c.name).toEqual(expect.arrayContaining(['/var/lib/placemat', '/tmp']))
      }
    }
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(30)
  })

  it('is selected by the Service (port 8778) and the PodDisruptionBudget, neither of which takes the Job pods', () => {
    const service = only('Service')
    const pdb = only('PodDisruptionBudget')
    const jobLabels = job.spec.template.metadata.labels
    expect(selects(service.spec.selector, podLabels)).toBe(true)
    expect(selects(pdb.spec.selector.matchLabels, podLabels)).toBe(true)
    expect(selects(service.spec.selector, jobLabels)).toBe(false)
    expect(selects(pdb.spec.selector.matchLabels, jobLabels)).toBe(false)
    expect(service.spec.ports).toHaveLength(1)
    expect(service.spec.ports[0].port).toBe(8778)
    expect(port(service.spec.ports[0].targetPort)).toBe(8778)
    expect(pdb.spec.maxUnavailable ?? deployment.spec.replicas - pdb.spec.minAvailable).toBe(1)
  })

  it('takes the database URL from a Secret and writes no password or credential anywhere', () => {
    expect(docs.filter((d) => d.obj.kind === 'Secret')).toEqual([])
    for (const spec of [deployment.spec.template.spec, job.spec.template.spec]) {
      const c = spec.containers[0]
      expect(c.env.find((e: any) => e.name === 'PLACEMAT_DB')).toEqual({
        name: 'PLACEMAT_DB',
        valueFrom: {secretKeyRef: {name: 'placemat-db', key: 'url'}},
      })
      expect(c.env.filter((e: any) => 'value' in e)).toEqual([])
      expect(c.args).not.toContain('--db')
    }
    const text = docs.map((d) => JSON.stringify(d.obj)).join('\n')
    expect(text).not.toMatch(/[a-z]+:\/\/[^/\s"@]*:[^/\s"@]*@/i) // a URL with user:password
    const keys = (v: unknown): string[] =>
      v && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [...(Array.isArray(v) ? [] : [k]), ...keys(x)]) : []
    expect(docs.flatMap((d) => keys(d.obj)).filter((k) => /pass(word|wd)|^token$|credential|^stringData$/i.test(k))).toEqual([])
  })

  it('runs the image deploy/image/build.sh tags, in every container and kustomization', () => {
    const images = docs.flatMap(({obj}) => (obj.spec?.template?.spec?.containers ?? []).map((c: any) => c.image))
    expect(images.length).toBeGreaterThanOrEqual(2)
    for (const image of images) expect(image).toBe(`${imageName}:${version}`)
    for (const k of docs.filter((d) => d.obj.kind === 'Kustomization')) {
      expect(k.obj.images, k.file).toEqual([{name: imageName, newName: imageName, newTag: version}])
    }
  })

  it('gives each command only flags it takes', async () => {
    for (const {file, obj} of docs) {
      for (const c of obj.spec?.template?.spec?.containers ?? []) {
        const words = c.args.filter((a: string) => !a.startsWith('-'))
        const commandFile = path.join(root, 'commands', words[0], `${words[1]}.ts`)
        expect(fs.existsSync(commandFile), `${file}: placemat ${words[0]} ${words[1]}`).toBe(true)
        const command = (await import(commandFile)).default
        const flags = command.flags as Record<string, {allowNo?: boolean}>
        for (const arg of c.args.filter((a: string) => a.startsWith('--'))) {
          const name = arg.slice(2).split('=')[0]
          const negated = name.startsWith('no-') && flags[name.slice(3)]?.allowNo
          expect(name in flags || negated, `${file}: placemat ${words[0]} ${words[1]} ${arg}`).toBe(true)
        }
      }
    }
  })
})

// Kubernetes' own schema (types, required fields, enumerations), from kubernetes-models.
const models = await import('kubernetes-models/v1/Service' as string).then(
  () => true,
  () => false,
)
if (!models) console.warn('kubernetes-manifests.test.ts: kubernetes-models is not installed (npm ci): the schema check is skipped')

describe.skipIf(!models)("deploy/kubernetes against Kubernetes' schema", () => {
  it('each object validates', async () => {
    for (const {file, obj} of docs.filter((d) => d.obj.kind !== 'Kustomization')) {
      const Model = (await import(`kubernetes-models/${obj.apiVersion}/${obj.kind}`))[obj.kind]
      expect(() => new Model(obj).validate(), `${file}: ${obj.kind}`).not.toThrow()
    }
  })
})
