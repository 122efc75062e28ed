import type {
  KyselyPlugin,
  OperationNode,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryId,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import type { Db } from './db.ts';

/**
 * The tables whose rows a process may keep for a moment instead of reading them on every request
 * (the room's exam, instructions and institute facts: domain/room/moment-cache.ts). A write to any
 * of them through this process's database moves its write generation on, so what was kept before
 * is read again at once; another process's write is seen when the moment ends.
 */
const WATCHED = new Set([
  'exams',
  'exam_comanagers',
  'documents',
  'attachments',
  'institutes',
  'message_overrides',
  'retention_policies',
]);

const WRITE_KINDS = new Set(['InsertQueryNode', 'UpdateQueryNode', 'DeleteQueryNode', 'MergeQueryNode']);
/** A raw statement that may write, and the watched table names it may write to. */
const RAW_WRITE = /\b(insert|update|delete|merge|alter|drop|truncate)\b/i;
const RAW_WATCHED = new RegExp(`\\b(${[...WATCHED].join('|')})\\b`, 'i');

/** Whether `node` (a query's tree, walked whole) names a watched table anywhere. */
function namesWatched(node: unknown, depth = 0): boolean {
  if (depth > 64 || node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((each) => namesWatched(each, depth + 1));
  const operation = node as OperationNode & { table?: { identifier?: { name?: unknown } } };
  if (operation.kind === 'TableNode') {
    const name = operation.table?.identifier?.name;
    return typeof name === 'string' && WATCHED.has(name);
  }
  for (const value of Object.values(node)) {
    if (typeof value === 'object' && namesWatched(value, depth + 1)) return true;
  }
  return false;
}

/** Whether a query may change a watched table (erring towards yes). */
function mayChangeWatched(node: RootOperationNode): boolean {
  if (node.kind === 'RawNode') {
    const text = node.sqlFragments.join(' ');
    return RAW_WRITE.test(text) && RAW_WATCHED.test(text);
  }
  if (!WRITE_KINDS.has(node.kind)) return false;
  return namesWatched(node);
}

/**
 * Counts this database's writes to the watched tables: the generation moves on when such a
 * statement is compiled and again when it has run, so a reader that kept a row before the write
 * finished never keeps it past the write.
 */
class WriteGenerationPlugin implements KyselyPlugin {
  generation = 0;
  readonly #writes = new WeakSet<QueryId>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (mayChangeWatched(args.node)) {
      this.generation += 1;
      this.#writes.add(args.queryId);
    }
    return args.node;
  }

  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.#writes.has(args.queryId)) this.generation += 1;
    return Promise.resolve(args.result);
  }
}

/** The plugin of each database, found from its adapter (shared by its transactions). */
const plugins = new WeakMap<object, WriteGenerationPlugin>();

/** A new plugin to build a database with; `track` then ties it to that database. */
export function writeGenerationPlugin(): { plugin: KyselyPlugin; track: (db: Db) => void } {
  const plugin = new WriteGenerationPlugin();
  return { plugin, track: (db) => plugins.set(db.getExecutor().adapter, plugin) };
}

/**
 * How many times this process has written to the watched tables of `db` (compiled and finished
 * count apart), or undefined for a database built without the plugin: then nothing may be kept.
 */
export function writeGeneration(db: Db): number | undefined {
  return plugins.get(db.getExecutor().adapter)?.generation;
}
