import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceUnavailable } from '../../src/domain/errors.ts';
import { createReportRenderer } from '../../src/domain/reports/report-renderer.ts';
import type { SessionReportData } from '../../src/domain/reports/session-report.ts';
import { sessionReportData } from '../helpers/report-data.ts';

const start = Date.UTC(2026, 10, 21, 8, 30);

function reportData(incidents: number): SessionReportData {
  const comment = 'The candidate looked away from the screen and spoke to someone. '.repeat(15).slice(0, 900);
  return {
    ...sessionReportData(start),
    incidents: Array.from({ length: incidents }, (_, index) => ({
      id: index + 1,
      kind: null,
      comment,
      offsetSeconds: index,
      createdAt: start,
    })),
  };
}

function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 5)).toString('latin1') === '%PDF-';
}

describe('createReportRenderer', () => {
  it('renders in its thread and answers the PDF', async () => {
    const renderer = createReportRenderer();
    try {
      const pdf = await renderer.render(reportData(2));
      assert.ok(isPdf(pdf));
    } finally {
      await renderer.close();
    }
  });

  it('abandons a report past its time budget (ServiceUnavailable), and renders the next in a new thread', async () => {
    // 30,000 incidents take well over a minute; the budget is 5 s.
    const renderer = createReportRenderer({ budgetMs: 5000 });
    try {
      const started = performance.now();
      await assert.rejects(renderer.render(reportData(30_000)), ServiceUnavailable);
      assert.ok(performance.now() - started < 30_000, 'given up near the budget');
      assert.ok(isPdf(await renderer.render(reportData(1))));
    } finally {
      await renderer.close();
    }
  });

  it('refuses a report at once when its queue is full', async () => {
    const renderer = createReportRenderer({ queueLimit: 1 });
    try {
      const first = renderer.render(reportData(1));
      const second = renderer.render(reportData(1));
      await assert.rejects(renderer.render(reportData(1)), ServiceUnavailable);
      assert.ok(isPdf(await first));
      assert.ok(isPdf(await second));
    } finally {
      await renderer.close();
    }
  });
});
