import type { Config } from '../../config/config.ts';
import type { Db } from '../../db/database.ts';
import type { PageLocale } from '../../i18n/locales.ts';
import { type Actor, processingRecordStanding } from '../access.ts';
import type { Clock } from '../clock.ts';
import { Forbidden, NotFound } from '../errors.ts';
import { parseId } from '../ids.ts';
import { type ReportRenderer, sharedReportRenderer } from '../reports/report-renderer.ts';
import { reportLocale } from '../reports/session-report.ts';
import { retentionFor } from '../retention/retention.service.ts';
import { type DeploymentFacts, hostOf, processingRecordFileName } from './processing-record.ts';
import {
  countExamUse,
  countLegalHolds,
  countStaff,
  findRecordInstitute,
  listIdentityProviders,
  listLtiPlatforms,
} from './processing-record.repository.ts';

/**
 * What the record says of the deployment, read from the configuration: where files are stored,
 * whether mail goes out, which live media engine runs, whether the public address is HTTPS, and
 * (from the composition root, which wires the storage) whether stored files are sealed at rest
 * (docs/storage.md). Returns the facts.
 */
export function deploymentFacts(config: Config, stored: { encryptionAtRest: boolean }): DeploymentFacts {
  const { storage, live } = config;
  return {
    storage:
      storage.kind === 'local'
        ? { kind: 'local' }
        : { kind: 's3', endpoint: storage.endpoint ?? null, region: storage.region ?? null },
    smtpConfigured: config.smtpUrl !== undefined,
    live: live.engine === 'livekit' ? { engine: 'livekit', host: hostOf(live.url) } : { engine: 'embedded' },
    encryptionAtRest: stored.encryptionAtRest,
    https: config.publicUrl.startsWith('https:'),
  };
}

/** A rendered record and the name to download it under. */
export interface ProcessingRecordFile {
  readonly instituteId: number;
  readonly fileName: string;
  readonly bytes: Uint8Array;
}

export interface ProcessingRecordsService {
  /**
   * The record of processing of institute `instituteId` (docs/data-protection.md), generated from
   * its settings now and rendered off the event loop, in `language` when given, else in the
   * institute's default language. Returns the PDF and its download name. Throws NotFound
   * (Institute) when it is missing or another institute's for a non-superuser, Forbidden for a
   * member who is not an administrator, ServiceUnavailable when the renderer is full or too slow.
   */
  record(actor: Actor, instituteId: string | number, language?: PageLocale): Promise<ProcessingRecordFile>;
}

/**
 * Builds the record's use case over the database, the clock, the deployment's facts (from the
 * configuration, in app.ts) and a renderer (by default the process's shared one, which the session
 * reports use too). Retention is read as the sweep applies it (retentionFor). Returns the service;
 * building it throws nothing.
 */
export function createProcessingRecordsService(deps: {
  db: Db;
  clock: Clock;
  deployment: DeploymentFacts;
  renderer?: ReportRenderer;
}): ProcessingRecordsService {
  const { db, clock, deployment } = deps;
  const renderer = deps.renderer ?? sharedReportRenderer;

  return {
    async record(actor, instituteId, language) {
      const id = parseId(instituteId);
      const institute = id === undefined ? undefined : await findRecordInstitute(db, id);
      if (institute === undefined) throw new NotFound('Institute', instituteId);
      const standing = processingRecordStanding(actor, institute.id);
      if (standing === 'hidden') throw new NotFound('Institute', instituteId);
      if (standing !== 'manage') throw new Forbidden();
      const locale = reportLocale(language, institute.defaultLanguage);
      const [exams, staff, legalHolds, ltiPlatforms, identityProviders, retention] = await Promise.all([
        countExamUse(db, institute.id),
        countStaff(db, institute.id),
        countLegalHolds(db, institute.id),
        listLtiPlatforms(db, institute.id),
        listIdentityProviders(db, institute.id),
        retentionFor(db, institute.id),
      ]);
      const bytes = await renderer.renderProcessingRecord({
        locale,
        generatedAt: clock.now(),
        institute: {
          id: institute.id,
          name: institute.name,
          shortName: institute.shortName,
          privacyContact: institute.privacyContact,
          dpoName: institute.dpoName,
          dpoEmail: institute.dpoEmail,
          appealPeriodDays: institute.appealPeriodDays,
          secondFactorForAdministrators: institute.secondFactorForAdministrators,
          secondReviewRequired: institute.secondReviewRequired,
        },
        exams,
        staff,
        retention: retention.map(({ kind, days, afterFinalVerdictHours }) => ({
          kind,
          days,
          afterFinalVerdictHours,
        })),
        legalHolds,
        ltiPlatforms,
        identityProviders,
        webhookHost: institute.callbackUrl === null ? null : hostOf(institute.callbackUrl),
        deployment,
      });
      return { instituteId: institute.id, fileName: processingRecordFileName(institute.id, locale), bytes };
    },
  };
}
