import autocannon from 'autocannon';

/** What one timed load run measured. Latencies are in milliseconds. */
export interface LoadFigures {
  readonly requestsPerSecond: number;
  readonly latencyP50Ms: number;
  readonly latencyP99Ms: number;
  readonly latencyMaxMs: number;
  readonly requests: number;
  readonly ok2xx: number;
  readonly non2xx: number;
  /** Status code → count, for everything answered. */
  readonly statusCodes: Readonly<Record<string, number>>;
  /** Connection errors, timeouts included. */
  readonly errors: number;
  readonly timeouts: number;
  readonly seconds: number;
  /** Paths prepared for each connection, and the most responses any one connection received. */
  readonly pathsPerConnection: number;
  readonly mostOnOneConnection: number;
}

export interface LoadPlan {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Returns the path (with query) of one request, e.g. freshly signed. Called before the run. */
  readonly nextPath: () => string;
  /** How many paths each connection gets; one that sends them all starts over from its first. */
  readonly pathsPerConnection: number;
}

/**
 * Drives `plan.url` with autocannon (keep-alive connections, one request in flight on each) for
 * `plan.seconds`. Returns the figures; throws only when autocannon cannot run at all.
 *
 * Every request is built before the clock starts. autocannon's per-request hook (setupRequest)
 * rebuilds the request bytes each time, which costs the load generator enough to halve what it can
 * drive against a bare server on two cores; prepared requests keep the yardstick honest.
 */
export async function runLoad(plan: LoadPlan): Promise<LoadFigures> {
  const pools = Array.from({ length: plan.connections }, () =>
    Array.from({ length: plan.pathsPerConnection }, () => ({
      method: 'GET' as const,
      path: plan.nextPath(),
    })),
  );
  const answered: number[] = [];
  const result = await autocannon({
    url: plan.url,
    connections: plan.connections,
    duration: plan.seconds,
    headers: { ...plan.headers },
    setupClient: (client) => {
      const index = answered.length;
      answered.push(0);
      client.setRequests(pools[index % pools.length] ?? []);
      client.on('response', () => {
        answered[index] = (answered[index] ?? 0) + 1;
      });
    },
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stats.count ?? 0;
  }
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    requests: result.requests.total,
    ok2xx: result['2xx'],
    non2xx: result.non2xx,
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: plan.seconds,
    pathsPerConnection: plan.pathsPerConnection,
    mostOnOneConnection: Math.max(0, ...answered),
  };
}

/**
 * Why a load run's figures cannot be trusted as they stand; empty when every request got a 2xx (and,
 * with `pathsMustBeUnique`, no connection ran out of prepared paths and resent one).
 */
export function loadProblems(label: string, figures: LoadFigures, pathsMustBeUnique: boolean): string[] {
  const problems: string[] = [];
  if (pathsMustBeUnique && figures.mostOnOneConnection > figures.pathsPerConnection) {
    problems.push(
      `${label}: a connection sent ${figures.mostOnOneConnection} requests but had ${figures.pathsPerConnection} ` +
        'prepared, so it resent (replayed) some',
    );
  }
  if (figures.non2xx > 0) {
    problems.push(
      `${label}: ${figures.non2xx} of ${figures.requests} responses were not 2xx ${JSON.stringify(figures.statusCodes)}`,
    );
  }
  if (figures.errors > 0)
    problems.push(`${label}: ${figures.errors} connection errors (${figures.timeouts} timeouts)`);
  if (figures.ok2xx === 0) problems.push(`${label}: no successful responses at all`);
  return problems;
}
