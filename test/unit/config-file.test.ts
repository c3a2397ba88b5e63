/** placement.conf read as oslo.config writes it, for what applies to placemat; the rest is warned about, never misread. */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {ConfigFileError, parseIni, readConfigFile} from '../../src/daemon/config-file.js'
import {policyOptionsOf} from '../../src/daemon/policy-options.js'

const write = (text: string) => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'placemat-conf-')), 'placement.conf')
  fs.writeFileSync(file, text)
  return file
}

describe('placement.conf', () => {
  it("oslo.config's INI: sections, = or :, comments, continuation lines", () => {
    const ini = parseIni('# c\n[a]\nx = 1\ny: two\n  three\n; c\n[b]\nz=\n')
    expect(Object.fromEntries([...ini].map(([k, v]) => [k, Object.fromEntries(v)]))).toEqual({a: {x: '1', y: 'two\nthree'}, b: {z: ''}})
    expect(() => parseIni('x = 1\n', 'f')).toThrow(/f:1: expected \[section\]/)
  })

  it('reads what applies, warns about the rest, and refuses what it cannot read', () => {
    const file = write(`[DEFAULT]
debug = true
[api]
auth_strategy = keystone
[keystone_authtoken]
auth_url = http://keystone:5000/v3
www_authenticate_uri = http://keystone:5000
auth_type = password
username = placement
password = s3cret
project_name = service
user_domain_name = Default
project_domain_id = default
memcached_servers = mc:11211
[oslo_policy]
policy_file = /etc/placement/policy.yaml
enforce_scope = True
enforce_new_defaults = false
[cors]
allowed_origin = https://a.example, https://b.example
allow_headers = openstack-api-version
[placement]
max_allocation_candidates = 1000
randomize_allocation_candidates = yes
incomplete_consumer_project_id = 11111111-1111-1111-1111-111111111111
[oslo_middleware]
enable_proxy_headers_parsing = true
[placement_database]
connection = mysql+pymysql://placement:x@db/placement
max_pool_size = 10
`)
    const c = readConfigFile(file)
    expect(c.auth).toBe('keystone')
    expect(c.keystone).toEqual({
      authUrl: 'http://keystone:5000/v3',
      username: 'placement',
      password: 's3cret',
      projectName: 'service',
      userDomainName: 'Default',
      userDomainId: undefined,
      projectDomainName: undefined,
      projectDomainId: 'default',
      wwwAuthenticateUri: 'http://keystone:5000',
      tokenCacheSeconds: undefined,
    })
    expect(c.policy).toEqual({file: '/etc/placement/policy.yaml', enforceScope: true, enforceNewDefaults: false})
    expect(c.corsOrigins).toEqual(['https://a.example', 'https://b.example'])
    expect(c.maxCandidates).toBe(1000)
    expect(c.randomize).toBe(true)
    expect(c.logLevel).toBe('debug')
    expect(c.incompleteConsumer).toEqual({project: '11111111-1111-1111-1111-111111111111', user: undefined})
    expect(c.trustAnyProxy).toBe(true)
    expect(c.warnings).toEqual([
      `${file}: [keystone_authtoken] memcached_servers ignored (not an option placemat reads)`,
      `${file}: [placement_database] max_pool_size ignored (not an option placemat reads)`,
    ])
    // Kept as written: which database the daemon serves is database-source.ts's to decide.
    expect(c.databaseConnection).toBe('mysql+pymysql://placement:x@db/placement')
    for (const [text, error] of [
      ['[api]\nauth_strategy = ldap\n', /auth_strategy: keystone or noauth2, not 'ldap'/],
      ['[keystone_authtoken]\nauth_url = http://k\n', /\[keystone_authtoken\] needs username/],
      ['[keystone_authtoken]\nauth_type = v3token\n', /only password is supported/],
      ['[oslo_policy]\nenforce_scope = maybe\n', /enforce_scope: expected true or false/],
      ['[oslo_middleware]\nenable_proxy_headers_parsing = sometimes\n', /enable_proxy_headers_parsing: expected true or false/],
      ['[placement]\nmax_allocation_candidates = lots\n', /expected a whole number/],
      ['[DEFAULT]\ndebug = loud\n', /\[DEFAULT\] debug: expected true or false/],
    ] as const) {
      expect(() => readConfigFile(write(text)), text).toThrow(error)
    }
    expect(() => readConfigFile('/nonexistent/placement.conf')).toThrow(ConfigFileError)
  })

  it('[oslo_policy] under the flags: a flag, --enforce-scope or --no-enforce-scope, wins; what neither says stays unset (the generation decides)', () => {
    const file = {file: '/etc/placement/policy.yaml', enforceScope: false, enforceNewDefaults: false}
    expect(policyOptionsOf({}, file)).toEqual({defaults: undefined, ...file})
    expect(policyOptionsOf({'enforce-scope': true, 'policy-file': '/x.yaml', 'policy-defaults': '8.0.0'}, file)).toEqual({
      defaults: '8.0.0',
      file: '/x.yaml',
      enforceScope: true,
      enforceNewDefaults: false,
    })
    expect(policyOptionsOf({'enforce-new-defaults': false}, {})).toEqual({
      defaults: undefined,
      file: undefined,
      enforceNewDefaults: false,
      enforceScope: undefined,
    })
  })
})
