/** Which database a migration runs on, where a migration has to know. */
import {type Kysely, MysqlAdapter} from 'kysely'

/** MariaDB (MySQL's dialect): a table or two takes another shape there, none that SQLite or PostgreSQL ever had. */
export const isMysql = (db: Kysely<any>) => db.getExecutor().adapter instanceof MysqlAdapter
