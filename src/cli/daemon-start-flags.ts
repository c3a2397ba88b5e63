/**
 * The flags of `placemat daemon start`, by group: where it listens and whom it believes, the
 * policy, the database, stopping and reloading, the edge. The command reads them; what they
 * mean for the daemon is src/daemon/daemon-settings.ts's.
 */
import {Flags} from '@oclif/core'
import {LOG_LEVELS} from '../http/access-log.js'
import {POLICY_GENERATIONS} from '../http/policy/defaults.js'
import {DEFAULT_HOST, DEFAULT_PORT} from '../daemon/paths.js'
import {localDbFlag} from './local-db-flag.js'

export const daemonStartFlags = {
  foreground: Flags.boolean({description: 'stay in the foreground until SIGTERM or SIGINT'}),
  db: localDbFlag('SQLite database file, or a postgres:// or mysql:// (MariaDB) URL'),
  host: Flags.string({description: 'address to listen on', default: DEFAULT_HOST}),
  port: Flags.integer({description: 'port to listen on (0: any free port)', default: DEFAULT_PORT}),
  auth: Flags.string({
    description:
      "token (default): only the admin token in the data directory; noauth2: Placement's test auth (keystonemiddleware's headers); " +
      'keystone: tokens validated against Keystone ([keystone_authtoken] of --config-file)',
    options: ['token', 'noauth2', 'keystone'],
  }),
  'config-file': Flags.string({
    description:
      "OpenStack Placement's placement.conf: [api] auth_strategy, [keystone_authtoken], [oslo_policy], [cors], [placement], [placement_database] connection (flags override it)",
  }),
  'cors-origin': Flags.string({description: 'allowed CORS origin (repeatable)', multiple: true}),
  'cors-allow-headers': Flags.string({description: 'comma separated headers CORS preflights may ask for'}),
  'max-candidates': Flags.integer({description: 'cap on allocation candidates generated (-1: none, the default)'}),
  randomize: Flags.boolean({description: 'shuffle allocation candidates when a limit applies'}),
  'answer-cache': Flags.boolean({
    description: 'reuse the serialized answer to an identical candidates query or provider list until the next write',
    default: true,
    allowNo: true,
  }),
  'warm-up': Flags.boolean({
    description:
      'rehearse the requests a scheduler makes on a throwaway in-memory cloud once serving, so the first real ones run at full speed (PLACEMAT_WARM_UP=0 also turns it off)',
    default: true,
    allowNo: true,
  }),
  strategy: Flags.string({
    description: 'candidate generation across trees',
    options: ['breadth-first', 'depth-first'],
    default: 'depth-first',
  }),
  'log-level': Flags.string({
    description:
      'least severe log lines written (JSON on stdout: the log file when detached); info (the default, or [DEFAULT] debug of --config-file) logs every request',
    options: [...LOG_LEVELS],
  }),
  durability: Flags.string({
    description:
      'full: every acknowledged write is fsynced before the answer (a power loss loses nothing); ' +
      'normal: SQLite syncs at checkpoints only, faster, but a power loss or kernel crash can lose the last ' +
      'acknowledged writes (PostgreSQL: synchronous_commit off)',
    options: ['full', 'normal'],
    default: 'full',
  }),
  'request-timeout': Flags.integer({description: 'seconds a client has to send a whole request (headers: at most 30)', default: 120}),
  'metrics-public': Flags.boolean({description: 'serve GET /metrics without a token (it needs the admin token otherwise)'}),
  flavors: Flags.string({
    description:
      'a flavor file (openstack flavor list --long -f json, or YAML): GET /placemat/v1/capacity and the placemat_flavor_fit gauges count it, POST /placemat/v1/make-room finds its flavors by name; read again on SIGHUP',
  }),
  'policy-file': Flags.string({
    description:
      'Placement policy overrides (oslo.policy YAML or JSON: rule name -> check string), over the defaults --policy-defaults names',
    helpGroup: 'POLICY',
  }),
  'policy-defaults': Flags.string({
    description:
      "whose default rules: Placement 15.0.0's (9.0.0 onwards: project-scoped, role admin or service; a current cloud) " +
      "or 8.0.0's (Zed and before: system-scoped admins and readers; new defaults and scope then unenforced unless told)",
    options: [...POLICY_GENERATIONS],
    default: POLICY_GENERATIONS[0],
    helpGroup: 'POLICY',
  }),
  'enforce-new-defaults': Flags.boolean({
    description:
      "Placement's secure-RBAC defaults alone; --no-enforce-new-defaults: a deprecated default (role:admin) still allows what it allowed. " +
      "Default: on with 15.0.0's defaults (as Placement 2026.1), off with 8.0.0's (as a Zed-era cloud); over [oslo_policy] enforce_new_defaults",
    allowNo: true,
    helpGroup: 'POLICY',
  }),
  'enforce-scope': Flags.boolean({
    description:
      "refuse a token whose scope (system or project) the rule does not list (with 15.0.0's defaults, every system-scoped token); " +
      "--no-enforce-scope: any scope. Default: on with 15.0.0's defaults, off with 8.0.0's; over [oslo_policy] enforce_scope",
    allowNo: true,
    helpGroup: 'POLICY',
  }),
  'db-url-file': Flags.string({
    description:
      "a file holding the database URL (a container's or Kubernetes' secret; its trailing newline trimmed), as PLACEMAT_DB_FILE names one: " +
      "below --db and PLACEMAT_DB, above placement.conf's [placement_database] connection",
    helpGroup: 'DATABASE',
  }),
  'db-wait': Flags.integer({
    description:
      'seconds to wait for the database at start (retrying with backoff, health answering "starting"); then exit 1. Default: wait until it answers or the daemon is stopped',
    helpGroup: 'DATABASE',
  }),
  'db-connect-timeout': Flags.integer({
    description: 'seconds to open a database connection before the request gets 503',
    default: 5,
    helpGroup: 'DATABASE',
  }),
  'db-statement-timeout': Flags.integer({
    description: 'seconds one database statement may take before the request gets 503',
    default: 30,
    helpGroup: 'DATABASE',
  }),
  'db-lock-timeout': Flags.integer({
    description: 'seconds a write waits for the write lock before it gets 503',
    default: 10,
    helpGroup: 'DATABASE',
  }),
  // Stopping and reloading: SIGTERM drains, SIGHUP reloads.
  'shutdown-delay': Flags.integer({
    description:
      'seconds between SIGTERM and closing the listener, health answering 503 "stopping" so a balancer takes the node out (requests still served)',
    default: 0,
    min: 0,
    helpGroup: 'SERVICE',
  }),
  'shutdown-timeout': Flags.integer({
    description:
      'seconds from SIGTERM to exit at most: requests in flight are answered and committed meanwhile; after it the daemon exits 1. `daemon stop` waits as long',
    default: 30,
    min: 1,
    helpGroup: 'SERVICE',
  }),
  // the edge: behind a balancer, TLS
  'trusted-proxies': Flags.string({
    description:
      'comma separated addresses or CIDR blocks of the proxies whose X-Forwarded-For/-Proto/-Host/-Prefix and Forwarded headers are believed ' +
      "(overrides placement.conf's [oslo_middleware] enable_proxy_headers_parsing; '' trusts none)",
    helpGroup: 'EDGE',
  }),
  'base-path': Flags.string({
    description: 'the path the API is published under (/placement): links and Location name it, and requests under it are served too',
    helpGroup: 'EDGE',
  }),
  'tls-cert': Flags.string({
    description: 'serve HTTPS (TLS 1.2 or later) with this PEM certificate (chain); needs --tls-key',
    helpGroup: 'EDGE',
  }),
  'tls-key': Flags.string({description: "the PEM private key of --tls-cert's certificate (unencrypted)", helpGroup: 'EDGE'}),
}
