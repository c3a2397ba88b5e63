import {NAMES_NAMESPACE, uuid5} from '../core/uuids.js'
import {TRAITS_ADDED_SINCE_2_9_0} from '../core/standard.js'
import {type Kysely, type Migration, MysqlAdapter, PostgresAdapter, sql} from 'kysely'
import {RELEASE, recordMinRelease} from './release.js'

/** Row types of the database, as kysely sees them. Times are epoch milliseconds. */
export interface Database {
  resource_classes: {id: number; name: string; created_at: number; updated_at: number}
  traits: {id: number; name: string; created_at: number; updated_at: number}
  resource_providers: {
    uuid: string
    name: string
    generation: number
    parent_uuid: string | null
    root_uuid: string
    created_at: number
    updated_at: number
    /** Creation order (0003): the order providers are listed and searched in. */
    seq: number
    /** Why the host is out of service (0009; core/host-status.ts): placemat's own, null for none. */
    disabled_reason?: string | null
  }
  inventories: {
    provider_uuid: string
    resource_class: string
    total: number
    reserved: number
    min_unit: number
    max_unit: number
    step_size: number
    allocation_ratio: number
  }
  provider_traits: {provider_uuid: string; trait: string}
  provider_aggregates: {provider_uuid: string; aggregate_uuid: string}
  consumers: {
    uuid: string
    project_id: string
    user_id: string
    consumer_type: string | null
    generation: number
    created_at: number
    updated_at: number
  }
  allocations: {consumer_uuid: string; provider_uuid: string; resource_class: string; used: number}
  placemat_meta: {key: string; value: string}
  topology_nodes: {
    uuid: string
    name: string
    level: string
    parent_uuid: string | null
    created_at: number
    updated_at: number
  }
  placement_groups: {
    name: string
    policy: string
    level: string
    max_per: number | null
    max_skew: number | null
    soft: number
    generation: number
    created_at: number
    updated_at: number
  }
  /** `seq`: the order members joined. */
  placement_group_members: {group_name: string; consumer_uuid: string; seq: number}
  /** The change journal (journal.ts): the keys each write transaction changed, under its sequence number. */
  placemat_changes: {seq: number; kind: string; key: string; parts: number}
  /** Consumers that gave their allocations to another (core/consumer-moves.ts): who they were, and to whom. */
  moved_consumers: {uuid: string; moved_to: string; project_id: string; user_id: string; consumer_type: string | null; moved_at: number}
  /** Names apply files gave aggregates (0010; core/aggregate-names.ts): one name an aggregate, one aggregate a name. */
  aggregate_names: {uuid: string; name: string; updated_at: number}
  /** The rows each small write transaction left, as JSON (0011; journal.ts): followers apply them without reading the tables. */
  placemat_change_images: {
    seq: number
    body: string
    /** How `body` is laid out (0013): IMAGE_FORMAT for the JSON every release so far writes; absent from 0.1.0's inserts (the default). */
    format?: number
  }
  /** The nodes serving the database (0012; node-registry.ts): each daemon's release, the schema it serves, where it runs, its last beat. */
  placemat_nodes: {
    id: string
    release: string
    schema_from: string
    schema_to: string
    host: string
    pid: number
    url: string
    started_at: number
    beat_at: number
  }
}

/**
 * Each table's primary key, as the migrations make it: MariaDB keeps rows in its order, so a load
 * there reads them in it, and a follower reads a key's rows again in the same order.
 */
export const PRIMARY_KEYS: Record<keyof Database, readonly string[]> = {
  resource_classes: ['id'],
  traits: ['id'],
  resource_providers: ['uuid'],
  inventories: ['provider_uuid', 'resource_class'],
  provider_traits: ['provider_uuid', 'trait'],
  provider_aggregates: ['provider_uuid', 'aggregate_uuid'],
  consumers: ['uuid'],
  allocations: ['consumer_uuid', 'provider_uuid', 'resource_class'],
  placemat_meta: ['key'],
  topology_nodes: ['uuid'],
  placement_groups: ['name'],
  placement_group_members: ['group_name', 'consumer_uuid'],
  placemat_changes: ['id'],
  moved_consumers: ['uuid'],
  aggregate_names: ['uuid'],
  placemat_change_images: ['seq'],
  placemat_nodes: ['id'],
}

/** MariaDB (MySQL's dialect): a table or two takes another shape there, none that SQLite or PostgreSQL ever had. */
const isMysql = (db: Kysely<any>) => db.getExecutor().adapter instanceof MysqlAdapter

/**
 * Schema migrations, in order. The map is static so a bundled build carries them;
 * new migrations are appended with the next number and never edited once released.
 */
export const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('resource_classes')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('traits')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('resource_providers')
        .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(200)', (c) => c.notNull().unique())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('parent_uuid', 'varchar(36)')
        .addColumn('root_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('resource_providers_root').on('resource_providers').column('root_uuid').execute()
      await db.schema
        .createTable('inventories')
        .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('resource_class', 'varchar(255)', (c) => c.notNull())
        .addColumn('total', 'integer', (c) => c.notNull())
        .addColumn('reserved', 'integer', (c) => c.notNull())
        .addColumn('min_unit', 'integer', (c) => c.notNull())
        .addColumn('max_unit', 'integer', (c) => c.notNull())
        .addColumn('step_size', 'integer', (c) => c.notNull())
        .addColumn('allocation_ratio', 'double precision', (c) => c.notNull())
        .addPrimaryKeyConstraint('inventories_pk', ['provider_uuid', 'resource_class'])
        .execute()
      await db.schema
        .createTable('provider_traits')
        .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('trait', 'varchar(255)', (c) => c.notNull())
        .addPrimaryKeyConstraint('provider_traits_pk', ['provider_uuid', 'trait'])
        .execute()
      await db.schema
        .createTable('provider_aggregates')
        .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('aggregate_uuid', 'varchar(36)', (c) => c.notNull())
        .addPrimaryKeyConstraint('provider_aggregates_pk', ['provider_uuid', 'aggregate_uuid'])
        .execute()
      await db.schema
        .createTable('consumers')
        .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('project_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('consumer_type', 'varchar(255)')
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('allocations')
        .addColumn('consumer_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('provider_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('resource_class', 'varchar(255)', (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('allocations_pk', ['consumer_uuid', 'provider_uuid', 'resource_class'])
        .execute()
      await db.schema.createIndex('allocations_provider').on('allocations').column('provider_uuid').execute()
      await db.schema
        .createTable('placemat_meta')
        .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute()
      await sql`select 1`.execute(db)
    },
  },
  // Racks, rows and rooms: named aggregates with a level and the node that contains them.
  '0002_topology': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('topology_nodes')
        .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(255)', (c) => c.notNull())
        .addColumn('level', 'varchar(16)', (c) => c.notNull())
        .addColumn('parent_uuid', 'varchar(36)')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('topology_nodes_level_name', ['level', 'name'])
        .execute()
    },
  },
  // Creation order as a column: PostgreSQL has no rowid, and rewrites rows it updates
  // elsewhere in the table, so listing order must not depend on where rows sit.
  '0003_provider_order': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('resource_providers').addColumn('seq', 'bigint').execute()
      const rows = await db
        .selectFrom('resource_providers')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst()
      // Rows exist only in SQLite files made before this migration: keep their rowid order.
      if (Number(rows?.n ?? 0) > 0) await sql`update resource_providers set seq = rowid`.execute(db)
    },
  },
  // Racks, rows and rooms join placemat's one namespace (uuid5 of "level:name" in the namespace
  // of apply files): each node's aggregate uuid changes, and so does every membership of it;
  // the providers whose aggregates changed get their generation bumped, as any aggregate write.
  '0004_one_namespace': {
    async up(db: Kysely<any>) {
      const nodes = await db.selectFrom('topology_nodes').select(['uuid', 'name', 'level']).execute()
      const moved = new Map<string, string>()
      for (const n of nodes) {
        const next = uuid5(`${n.level}:${n.name}`, NAMES_NAMESPACE)
        if (next !== n.uuid) moved.set(n.uuid, next)
      }
      const touched = new Set<string>()
      for (const [old, next] of moved) {
        await db.updateTable('topology_nodes').set({uuid: next}).where('uuid', '=', old).execute()
        await db.updateTable('topology_nodes').set({parent_uuid: next}).where('parent_uuid', '=', old).execute()
        for (const m of await db.selectFrom('provider_aggregates').select('provider_uuid').where('aggregate_uuid', '=', old).execute()) {
          touched.add(m.provider_uuid)
        }
        await db.updateTable('provider_aggregates').set({aggregate_uuid: next}).where('aggregate_uuid', '=', old).execute()
      }
      for (const uuid of touched) {
        await db
          .updateTable('resource_providers')
          .set((eb: any) => ({generation: eb('generation', '+', 1)}))
          .where('uuid', '=', uuid)
          .execute()
      }
    },
  },
  // Placement groups: named sets of consumers with a rule on where they may be.
  '0005_placement_groups': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('placement_groups')
        .addColumn('name', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('policy', 'varchar(16)', (c) => c.notNull())
        .addColumn('level', 'varchar(16)', (c) => c.notNull())
        .addColumn('max_per', 'integer')
        .addColumn('max_skew', 'integer')
        .addColumn('soft', 'integer', (c) => c.notNull())
        .addColumn('generation', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
      await db.schema
        .createTable('placement_group_members')
        .addColumn('group_name', 'varchar(200)', (c) => c.notNull())
        .addColumn('consumer_uuid', 'varchar(36)', (c) => c.notNull())
        .addColumn('seq', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('placement_group_members_pk', ['group_name', 'consumer_uuid'])
        .execute()
    },
  },
  // The change journal: what each write changed, so other processes read only that (journal.ts).
  // The counter and the floor start where the database is: whoever loaded it is current at 0.
  '0006_change_journal': {
    async up(db: Kysely<any>) {
      // MariaDB: a key of its own, as Galera replicates only tables with a primary key (a table
      // new there, so no released database changes).
      const mysql = isMysql(db)
      await db.schema
        .createTable('placemat_changes')
        .$call((t) => (mysql ? t.addColumn('id', 'bigint', (c) => c.autoIncrement().primaryKey()) : t))
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'varchar(4)', (c) => c.notNull())
        .addColumn('key', 'varchar(255)', (c) => c.notNull())
        .addColumn('parts', 'integer', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('placemat_changes_seq').on('placemat_changes').columns(['seq', 'kind']).execute()
      // PostgreSQL loads providers in seq order.
      await db.schema.createIndex('resource_providers_seq').on('resource_providers').column('seq').execute()
      const have = await db.selectFrom('placemat_meta').select('key').where('key', 'in', ['change_counter', 'journal_floor']).execute()
      const keys = new Set(have.map((r: {key: string}) => r.key))
      const counter = await db.selectFrom('placemat_meta').select('value').where('key', '=', 'change_counter').executeTakeFirst()
      if (!keys.has('change_counter')) await db.insertInto('placemat_meta').values({key: 'change_counter', value: '0'}).execute()
      // Nothing before this point is journalled: a process behind it loads everything.
      const floor = String(Number(counter?.value ?? 0))
      if (!keys.has('journal_floor')) await db.insertInto('placemat_meta').values({key: 'journal_floor', value: floor}).execute()
    },
  },
  // os-traits 3.9.0: the traits a current nova-compute sets that 2.9.0 lacked. A new database gets
  // every standard trait when it is first opened (Store.ensureStandard); an older one gets these
  // here, and the counter and the floor move so that every process following it loads again.
  '0007_os_traits_3_9_0': {
    async up(db: Kysely<any>) {
      const rows: Array<{name: string; id: number | string}> = await db.selectFrom('traits').select(['name', 'id']).execute()
      if (!rows.length) return
      const have = new Set(rows.map((r) => r.name))
      const missing = TRAITS_ADDED_SINCE_2_9_0.filter((t) => !have.has(t))
      if (!missing.length) return
      const now = Date.now()
      let id = rows.reduce((m, r) => Math.max(m, Number(r.id)), 0) + 1
      await db
        .insertInto('traits')
        .values(missing.map((name) => ({id: id++, name, created_at: now, updated_at: now})))
        .execute()
      const counter = await db.selectFrom('placemat_meta').select('value').where('key', '=', 'change_counter').executeTakeFirst()
      const next = String(Number(counter?.value ?? 0) + 1)
      for (const key of ['change_counter', 'journal_floor'])
        await db.updateTable('placemat_meta').set({value: next}).where('key', '=', key).execute()
    },
  },
  // What a consumer was when it gave its allocations away (claim move), while it holds nothing:
  // Placement deletes its record, and claiming it again or moving them back needs its project,
  // user and type.
  '0008_moved_consumers': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('moved_consumers')
        .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('moved_to', 'varchar(36)', (c) => c.notNull())
        .addColumn('project_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(255)', (c) => c.notNull())
        .addColumn('consumer_type', 'varchar(255)')
        .addColumn('moved_at', 'bigint', (c) => c.notNull())
        .execute()
    },
  },
  // Why a host is out of service (placemat host disable --reason): kept with the host, beside
  // the COMPUTE_STATUS_DISABLED trait Placement keeps.
  '0009_host_disabled_reason': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('resource_providers').addColumn('disabled_reason', 'varchar(255)').execute()
    },
  },
  // The names an apply file gives aggregates (its `aggregates:` map and the names in providers'
  // lists): Placement keeps only the uuids, so listings could not show the names again.
  '0010_aggregate_names': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('aggregate_names')
        .addColumn('uuid', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute()
    },
  },
  // What each small write transaction left (its rows, as JSON), beside its keys in the journal:
  // another node applies it from this one row, without reading the rows it names (journal.ts).
  // PostgreSQL also gets the check of a keyed write (Backend.commitKeyed) as a function, so that
  // its plan is made once per connection, not with every write. Its kinds and part are journal.ts's
  // KEY.provider, KEY.consumer and PART.generation.
  '0011_change_images': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('placemat_change_images')
        .addColumn('seq', 'bigint', (c) => c.primaryKey())
        // MariaDB's text holds 64 KiB; an image may be up to a MiB of characters.
        .addColumn('body', isMysql(db) ? sql`mediumtext` : 'text', (c) => c.notNull())
        .execute()
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
      await sql`create or replace function placemat_keyed_check(pos bigint, providers text[], consumers text[], span bigint) returns void language plpgsql as $pm$
        declare c bigint; f bigint;
        begin
          select coalesce(max(case when key = 'change_counter' then cast(value as bigint) end), 0),
                 coalesce(max(case when key = 'journal_floor' then cast(value as bigint) end), 0)
            into c, f from placemat_meta where key in ('change_counter', 'journal_floor');
          if c = pos then return; end if;
          if f > pos or c - pos > span
             or (select count(*) from placemat_change_images where seq > pos and seq <= c) <> c - pos
             or exists (select 1 from placemat_changes where seq > pos and seq <= c and (kind not in ('p', 'c')
                        or (kind = 'p' and (parts not in (0, 2) or key = any(providers))) or (kind = 'c' and key = any(consumers)))) then
            raise exception using errcode = 'PM409', message = 'a change since touched what this write depends on';
          end if;
        end $pm$`.execute(db)
    },
  },

  // ---- placemat 0.2.0: two expands, then its contract (PHASES) ----

  // The nodes serving the database (node-registry.ts): each daemon registers its release, the
  // schema range it serves, host, pid and URL, and beats every few seconds, outside the journal.
  // A new table: placemat 0.1.0 never reads it.
  '0012_nodes': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('placemat_nodes')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('release', 'varchar(64)', (c) => c.notNull())
        .addColumn('schema_from', 'varchar(255)', (c) => c.notNull())
        .addColumn('schema_to', 'varchar(255)', (c) => c.notNull())
        .addColumn('host', 'varchar(255)', (c) => c.notNull())
        .addColumn('pid', 'integer', (c) => c.notNull())
        .addColumn('url', 'varchar(1024)', (c) => c.notNull())
        .addColumn('started_at', 'bigint', (c) => c.notNull())
        .addColumn('beat_at', 'bigint', (c) => c.notNull())
        .execute()
    },
  },
  // An image's format (journal.ts IMAGE_FORMAT) in a column of its own, so that a node is never
  // handed an image it cannot read: 1, the JSON every release so far writes, is the default, which
  // placemat 0.1.0's inserts (they name seq and body) get. PostgreSQL: the keyed check v2, which
  // this release calls, also refuses a write whose window holds an image of a format newer than
  // its writer reads (the write is retried under the lock, where the rows are read instead).
  // v1 (0011) stays for the nodes of 0.1.0 until the contract (0014).
  '0013_keyed_check_v2': {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable('placemat_change_images')
        .addColumn('format', 'integer', (c) => c.notNull().defaultTo(1))
        .execute()
      if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return
      await sql`create or replace function placemat_keyed_check_v2(pos bigint, providers text[], consumers text[], span bigint, formats integer) returns void language plpgsql as $pm$
        declare c bigint; f bigint;
        begin
          select coalesce(max(case when key = 'change_counter' then cast(value as bigint) end), 0),
                 coalesce(max(case when key = 'journal_floor' then cast(value as bigint) end), 0)
            into c, f from placemat_meta where key in ('change_counter', 'journal_floor');
          if c = pos then return; end if;
          if f > pos or c - pos > span
             or (select count(*) from placemat_change_images where seq > pos and seq <= c and format <= formats) <> c - pos
             or exists (select 1 from placemat_changes where seq > pos and seq <= c and (kind not in ('p', 'c')
                        or (kind = 'p' and (parts not in (0, 2) or key = any(providers))) or (kind = 'c' and key = any(consumers)))) then
            raise exception using errcode = 'PM409', message = 'a change since touched what this write depends on';
          end if;
        end $pm$`.execute(db)
    },
  },
  // The contract of 0.2.0: the keyed check v1 is retired (no node of this release calls it), and
  // the database records 0.2.0 as the oldest release that may serve it. placemat 0.1.0 cannot read
  // that record; what it can meet is v1, now a refusal naming why, raised as SQLSTATE 57P03
  // (cannot_connect_now), which 0.1.0 takes for an unavailable database: its allocation writes
  // answer 503, its health turns 503 (a balancer takes the node out), and its log says why.
  '0014_retire_keyed_check_v1': {
    async up(db: Kysely<any>) {
      if (db.getExecutor().adapter instanceof PostgresAdapter) {
        await sql`create or replace function placemat_keyed_check(pos bigint, providers text[], consumers text[], span bigint) returns void language plpgsql as $pm$
          begin
            raise exception using errcode = '57P03',
              message = 'this database was contracted by placemat 0.2.0 (0014_retire_keyed_check_v1): it needs placemat 0.2.0 or later, and this node runs an older release; upgrade it';
          end $pm$`.execute(db)
      }
      await recordMinRelease(db, {release: '0.2.0', migration: '0014_retire_keyed_check_v1'})
    },
  },
}

/** The schema placemat 0.1.0 serves: the migrations up to it are the baseline of the expand/contract contract. */
export const BASELINE = '0011_change_images'

/**
 * Each migration after the baseline: the release that brought it, and its phase. An expand is
 * additive: every node of the release before keeps serving the database, and what those nodes
 * write reads right here. A contract is what only its release and later can live with: it
 * records that release as the oldest that may serve (placemat_meta min_release). A release's
 * contracts come after its expands; its code serves the database before and after them.
 */
export const PHASES: Record<string, {release: string; phase: 'expand' | 'contract'}> = {
  '0012_nodes': {release: '0.2.0', phase: 'expand'},
  '0013_keyed_check_v2': {release: '0.2.0', phase: 'expand'},
  '0014_retire_keyed_check_v1': {release: '0.2.0', phase: 'contract'},
}

export const LATEST_MIGRATION = Object.keys(migrations).sort().at(-1)!

/** This release's range: the oldest schema it serves (its last expand) and its newest migration. */
export const SCHEMA_RANGE = {
  from:
    Object.keys(PHASES)
      .filter((m) => PHASES[m].release === RELEASE && PHASES[m].phase === 'expand')
      .sort()
      .at(-1) ?? BASELINE,
  to: LATEST_MIGRATION,
}
