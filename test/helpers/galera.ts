/**
 * A throwaway MariaDB Galera cluster (Debian's mariadb-server and galera-4) on 127.0.0.1, three
 * nodes by default (scripts/lib/mariadb.mjs, which the benchmarks share: how nodes join, rejoin
 * and lose their quorum is said there). Nodes can be killed (SIGKILL), stopped cleanly and started
 * again. `galeraAvailable` is false (and the tests that need it are skipped) where it is not
 * installed.
 */
import {galeraAvailable as available, startGalera as start} from '../../scripts/lib/mariadb.mjs'

export const galeraAvailable: boolean = available

export interface GaleraStatus {
  /** wsrep_ready: the node takes queries (it is synced, in the primary component). */
  ready: boolean
  /** wsrep_cluster_size: the nodes in its component. */
  clusterSize: number
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, Initialized, ... */
  state: string
  /** wsrep_cluster_status is Primary. */
  primary: boolean
}

export interface TestGalera {
  nodes: Array<{port: number; socket: string; readonly pid: number | undefined}>
  /** Creates a database (utf8mb4, utf8mb4_nopad_bin) on the cluster: its URL on each node. */
  database(name: string): Promise<string[]>
  /** `text` run on node `node` by the mariadb client: its output, tab separated, no column names. */
  sql(node: number, text: string): Promise<string>
  status(node: number): Promise<GaleraStatus>
  /** SIGKILLs the node's mariadbd. */
  kill(node: number): Promise<void>
  /** Stops the node cleanly (SIGTERM). */
  stop(node: number): Promise<void>
  /** Starts a killed or stopped node again; it joins the running cluster, and is waited for until synced. */
  restart(node: number): Promise<void>
  stopAll(): Promise<void>
}

/** `maxWsSize`: the nodes' wsrep_max_ws_size in bytes (Galera's default: 2 GiB). */
export const startGalera = (opts: {nodes?: number; maxWsSize?: number} = {}): Promise<TestGalera> => start(opts)
