/**
 * What every list screen keeps: its filters and page in the address (`UrlQuery`), and the page of
 * items the service answered, with its counts, loading flag and failure (`PagedList`). The
 * ListScreen component draws both; a screen only says what to ask for and how a row looks.
 */
import { t } from '../../../shared/i18n.svelte.ts';
import { problem, pageCounts } from './api';
import { newestOnly } from './newest-only';
import { location, navigate, readQuery, writeQuery } from './router.svelte';

/** The page number a query asks for: 1 when it names none or something that is not a page. */
export function pageOf(values: Readonly<Record<string, string>>): number {
  return Math.max(1, Number(values.page ?? '1') || 1);
}

/**
 * A list screen's filters, kept in the query string of its address so a filtered view can be
 * bookmarked and survives a reload. Changes replace the history entry (no Back step per filter).
 */
export class UrlQuery {
  /** The current query's parameters. */
  readonly values: Record<string, string> = $derived(readQuery(location.search));
  /** The page the address asks for (1 by default). */
  readonly page: number = $derived(pageOf(this.values));
  readonly #path: () => string;

  /** `path` gives the screen's own path under /console ("/outbox"), read on each change. */
  constructor(path: () => string) {
    this.#path = path;
  }

  /** Moves to the same screen with `changes` applied to the query ("" removes a parameter). */
  update(changes: Record<string, string>): void {
    navigate(`${this.#path()}${writeQuery({ ...readQuery(location.search), ...changes })}`, {
      replace: true,
    });
  }

  /** Applies a filter change and goes back to the first page. */
  filter(changes: Record<string, string>): void {
    this.update({ ...changes, page: '' });
  }

  /** Moves to another page of the same list. */
  goTo(page: number): void {
    this.update({ page: String(page) });
  }
}

/** What an openapi-fetch call answers: `data` on success, `error` otherwise, and the response. */
export interface ListAnswer<D> {
  readonly data?: D;
  readonly error?: unknown;
  readonly response: Response;
}

/**
 * One page of a paginated list as the service answered it. Loads may overlap (a filter changes
 * while the previous answer is on its way): only the newest one started writes its answer, so a
 * slow old answer never replaces a fresh list.
 */
export class PagedList<T> {
  items: T[] = $state([]);
  /** From the answer's X-Pagination-* headers (see `pageCounts`). */
  pageCount = $state(1);
  itemCount = $state(0);
  loading = $state(true);
  /** The last load's failure, in words for the user; undefined once a load starts. */
  error: string | undefined = $state();
  /** The service refused the list to this role (403): a screen offers no filters then. */
  refused = $state(false);
  readonly #requests = newestOnly();

  /**
   * Runs `request` and, if no newer load started meanwhile, shows the items `pick` takes from its
   * answer; `then` runs before the list stops being busy (e.g. loading the names the rows show).
   * Returns nothing; a failure (refusal, error status, no connection) ends up in `error`.
   */
  async load<D>(
    request: () => Promise<ListAnswer<D>>,
    pick: (data: D) => T[],
    then?: (items: T[]) => Promise<void>,
  ): Promise<void> {
    const ticket = this.#requests.take();
    this.loading = true;
    this.error = undefined;
    try {
      const { data, error, response } = await request();
      if (!this.#requests.isNewest(ticket)) return;
      if (data === undefined) {
        this.items = [];
        this.error = problem(error, response);
        this.refused = response.status === 403;
        return;
      }
      this.refused = false;
      this.items = pick(data);
      ({ pageCount: this.pageCount, itemCount: this.itemCount } = pageCounts(response, this.items.length));
      if (then !== undefined) await then(this.items);
    } catch {
      if (this.#requests.isNewest(ticket)) this.error = t('console.common.unreachableReload');
    } finally {
      if (this.#requests.isNewest(ticket)) this.loading = false;
    }
  }
}
