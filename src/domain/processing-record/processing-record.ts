/**
 * An institute's record of processing (docs/data-protection.md): what Invigil processes for it,
 * gathered from its actual settings, as a PDF its data protection officer can file. Pure apart
 * from the PDF library, whose fonts, right-to-left layout and page writer it shares with the
 * session report (src/domain/reports/session-report.ts).
 */
import { PDFDocument } from 'pdf-lib';
import { translator } from '../../i18n/catalogues.ts';
import { type PageLocale, textDirection } from '../../i18n/locales.ts';
import type { Translator } from '../../i18n/translate.ts';
import {
  embedFace,
  FSI,
  GREY,
  holdsArabic,
  isolatingTranslator,
  MARGIN,
  PAGE_WIDTH,
  PDI,
  readArabicFontFiles,
  readFontFiles,
  reportFontkit,
  reportInstant,
  Writer,
} from '../reports/session-report.ts';
import type { RetentionKind } from '../retention/retention.ts';

/**
 * How long one kind of session data is kept (docs/retention.md): days after the session ends, or
 * null when time alone does not remove it; and the hours after a final verdict it goes (the ID
 * photo), else null.
 */
export interface RecordRetention {
  readonly kind: RetentionKind;
  readonly days: number | null;
  readonly afterFinalVerdictHours: number | null;
}

/** How many of the institute's exams use each recording setting (deleted exams left out). */
export interface RecordExamUse {
  readonly total: number;
  readonly webcam: number;
  readonly screen: number;
  readonly phone: number;
  readonly uploads: number;
  readonly automatedFlags: number;
  readonly liveProctoring: number;
  readonly liveIdCheck: number;
}

/** The service's deployment, as app.ts knows it from the configuration. */
export interface DeploymentFacts {
  /** Where stored files go: the server's disk, or an S3-compatible service (its endpoint and region). */
  readonly storage:
    | { readonly kind: 'local' }
    | { readonly kind: 's3'; readonly endpoint: string | null; readonly region: string | null };
  readonly smtpConfigured: boolean;
  /** The live media engine: embedded in Invigil, or a LiveKit server (its host). */
  readonly live: { readonly engine: 'embedded' } | { readonly engine: 'livekit'; readonly host: string };
  /** Whether stored files are encrypted at rest (docs/storage.md). */
  readonly encryptionAtRest: boolean;
  /** Whether the service is reached over HTTPS (its PUBLIC_URL). */
  readonly https: boolean;
}

/** Everything the record shows, in plain values. */
export interface ProcessingRecordData {
  readonly locale: PageLocale;
  readonly generatedAt: number;
  readonly institute: {
    readonly id: number;
    readonly name: string;
    readonly shortName: string;
    readonly privacyContact: string | null;
    readonly dpoName: string | null;
    readonly dpoEmail: string | null;
    readonly appealPeriodDays: number;
    readonly secondFactorForAdministrators: boolean;
    readonly secondReviewRequired: boolean;
  };
  readonly exams: RecordExamUse;
  /** Active staff accounts per role (`administrator`: 2, ...), roles without any left out. */
  readonly staff: readonly { readonly role: string; readonly count: number }[];
  readonly retention: readonly RecordRetention[];
  readonly legalHolds: number;
  readonly ltiPlatforms: readonly { readonly name: string; readonly version: string }[];
  readonly identityProviders: readonly { readonly name: string; readonly protocol: string }[];
  /** The host webhook events go to; null without a callback URL. */
  readonly webhookHost: string | null;
  readonly deployment: DeploymentFacts;
}

/** Points of a page a heading needs below it besides its own (about six rows): no heading ends a page. */
const KEEP_WITH_HEADING = 120;

/** The download name of an institute's record. */
export function processingRecordFileName(instituteId: number, locale: string): string {
  return `institute-${instituteId}-record-of-processing-${locale}.pdf`;
}

/** The host of a URL, or the text as given when it is not one. Never throws. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

const RETENTION_LABELS: Readonly<Record<RetentionKind, string>> = {
  recording: 'pdf.record.retention.recordings',
  id_photo: 'pdf.record.retention.idPhoto',
  face_photo: 'pdf.record.retention.facePhoto',
  upload: 'pdf.record.retention.uploads',
  incident: 'pdf.record.retention.incidents',
};

/** How long one kind is kept, in words: by time, after a final verdict, both, or neither. */
function retentionText(t: Translator, entry: RecordRetention): string {
  const { days, afterFinalVerdictHours: hours } = entry;
  if (hours !== null && days !== null) return t.t('pdf.record.retention.daysOrVerdict', { days, hours });
  if (hours !== null) return t.t('pdf.record.retention.verdictOnly', { hours });
  if (days !== null) return t.t('pdf.record.retention.days', { days });
  return t.t('pdf.record.retention.keptWithSession');
}

const ROLE_LABELS: Readonly<Record<string, string>> = {
  superuser: 'pdf.record.role.superuser',
  administrator: 'pdf.record.role.administrator',
  teacher: 'pdf.record.role.teacher',
  proctor: 'pdf.record.role.proctor',
  reviewer: 'pdf.record.role.reviewer',
  auditor: 'pdf.record.role.auditor',
  global_proctor: 'pdf.record.role.globalProctor',
  global_reviewer: 'pdf.record.role.globalReviewer',
};

/** `Used in 3 of 10 exams` / `Not used`. */
function useText(t: Translator, count: number, total: number): string {
  if (count === 0) return t.t('pdf.record.use.none');
  return t.t('pdf.record.use.some', { count, total });
}

function storageText(t: Translator, storage: DeploymentFacts['storage']): string {
  if (storage.kind === 'local') return t.t('pdf.record.processors.storageLocal');
  return t.t('pdf.record.processors.storageS3', {
    endpoint: storage.endpoint === null ? 'Amazon S3' : hostOf(storage.endpoint),
    region: storage.region ?? '-',
  });
}

/**
 * Renders the record of processing: the controller and its contacts, the purposes, the data in use
 * across its exams, recipients and processors, transfers, retention per kind, safeguards, and on
 * every page the moment of generation and `Page i of n`. Laid out right to left in Arabic, in the
 * session report's fonts. Linear in the data; the service runs it in the report thread. Returns
 * the PDF's bytes; throws only what the PDF library throws.
 */
export async function renderProcessingRecord(data: ProcessingRecordData): Promise<Uint8Array> {
  const locale = data.locale;
  const direction = textDirection(locale);
  const t = isolatingTranslator(translator(locale), direction);
  const isolate = (value: string) => (direction === 'rtl' ? `${FSI}${value}${PDI}` : value);
  const { institute, exams, deployment } = data;
  const doc = await PDFDocument.create();
  const generated = new Date(data.generatedAt);
  doc.setTitle(t.t('pdf.record.meta.title', { institute: institute.name }));
  doc.setAuthor(institute.name);
  doc.setCreator('Invigil');
  doc.setProducer('Invigil (pdf-lib)');
  doc.setCreationDate(generated);
  doc.setModificationDate(generated);
  doc.setLanguage(t.locale);
  doc.registerFontkit(reportFontkit);
  const files = readFontFiles();
  const arabic = locale === 'ar' || holdsArabic(data) ? readArabicFontFiles() : { regular: [], bold: [] };
  const [regular, bold] = await Promise.all([
    embedFace(doc, [...files.regular, ...arabic.regular]),
    embedFace(doc, [...files.bold, ...arabic.bold]),
  ]);
  const out = new Writer(doc, regular, bold, direction);
  const when = reportInstant(data.generatedAt, 'UTC', t.locale);
  const notSet = t.t('pdf.record.notSet');
  /** A section's heading, on a new page when its first rows would not fit under it. */
  const heading = (title: string) => {
    out.need(KEEP_WITH_HEADING);
    out.heading(title);
  };

  out.paragraph(t.t('pdf.record.title'), { face: bold, size: 18 });
  out.space(8);
  out.paragraph(isolate(institute.name), { face: bold, size: 12 });
  out.paragraph(t.t('pdf.record.generatedFrom', { time: when }), { color: GREY });
  out.space(4);
  out.paragraph(t.t('pdf.record.intro'));

  heading(t.t('pdf.record.controller.heading'));
  out.field(
    t.t('pdf.record.controller.institute'),
    t.t('pdf.record.controller.instituteValue', {
      name: institute.name,
      shortName: institute.shortName,
      id: String(institute.id),
    }),
  );
  out.field(t.t('pdf.record.controller.privacyContact'), institute.privacyContact ?? notSet);
  const dpo = [institute.dpoName, institute.dpoEmail === null ? null : `<${institute.dpoEmail}>`]
    .filter((part) => part !== null)
    .join(' ');
  out.field(t.t('pdf.record.controller.dpo'), dpo === '' ? notSet : dpo);
  out.field(
    t.t('pdf.record.controller.appealPeriod'),
    t.t('pdf.record.controller.appealPeriodValue', { days: institute.appealPeriodDays }),
  );

  heading(t.t('pdf.record.purposes.heading'));
  out.paragraph(t.t('pdf.record.purposes.text'));
  out.space(4);
  out.paragraph(t.t('pdf.record.purposes.legalBasis'), { color: GREY });

  heading(t.t('pdf.record.subjects.heading'));
  out.paragraph(t.t('pdf.record.subjects.text'));

  heading(t.t('pdf.record.data.heading', { total: exams.total }));
  out.field(t.t('pdf.record.data.identity'), t.t('pdf.record.data.identityValue'));
  out.field(t.t('pdf.record.data.webcam'), useText(t, exams.webcam, exams.total));
  out.field(t.t('pdf.record.data.photos'), useText(t, exams.webcam, exams.total));
  out.field(t.t('pdf.record.data.screen'), useText(t, exams.screen, exams.total));
  out.field(t.t('pdf.record.data.phone'), useText(t, exams.phone, exams.total));
  out.field(t.t('pdf.record.data.uploads'), useText(t, exams.uploads, exams.total));
  out.field(t.t('pdf.record.data.flags'), useText(t, exams.automatedFlags, exams.total));
  out.field(t.t('pdf.record.data.live'), useText(t, exams.liveProctoring, exams.total));
  out.field(t.t('pdf.record.data.liveIdCheck'), useText(t, exams.liveIdCheck, exams.total));
  out.field(t.t('pdf.record.data.review'), t.t('pdf.record.data.reviewValue'));
  out.field(t.t('pdf.record.data.accommodations'), t.t('pdf.record.data.accommodationsValue'));
  out.field(t.t('pdf.record.data.technical'), t.t('pdf.record.data.technicalValue'));

  heading(t.t('pdf.record.recipients.heading'));
  const staff = data.staff.map((entry) => {
    const label = ROLE_LABELS[entry.role];
    return t.t('pdf.record.recipients.roleCount', {
      role: label === undefined ? entry.role : t.t(label),
      count: entry.count,
    });
  });
  out.field(t.t('pdf.record.recipients.staff'), staff.length === 0 ? notSet : staff.join('\n'));
  out.field(t.t('pdf.record.processors.storage'), storageText(t, deployment.storage));
  out.field(
    t.t('pdf.record.processors.mail'),
    deployment.smtpConfigured ? t.t('pdf.record.processors.mailOn') : t.t('pdf.record.processors.mailOff'),
  );
  out.field(
    t.t('pdf.record.processors.live'),
    deployment.live.engine === 'livekit'
      ? t.t('pdf.record.processors.liveKit', { host: deployment.live.host })
      : t.t('pdf.record.processors.liveEmbedded'),
  );
  out.field(
    t.t('pdf.record.processors.lti'),
    data.ltiPlatforms.length === 0
      ? t.t('pdf.record.processors.none')
      : data.ltiPlatforms.map((platform) => t.t('pdf.record.processors.ltiValue', platform)).join('\n'),
  );
  out.field(
    t.t('pdf.record.processors.identity'),
    data.identityProviders.length === 0
      ? t.t('pdf.record.processors.none')
      : data.identityProviders
          .map((provider) =>
            t.t('pdf.record.processors.identityValue', {
              name: provider.name,
              protocol: provider.protocol.toUpperCase(),
            }),
          )
          .join('\n'),
  );
  out.field(
    t.t('pdf.record.processors.webhooks'),
    data.webhookHost === null
      ? t.t('pdf.record.processors.none')
      : t.t('pdf.record.processors.webhooksValue', { host: data.webhookHost }),
  );

  heading(t.t('pdf.record.transfers.heading'));
  out.paragraph(t.t('pdf.record.transfers.text'));

  heading(t.t('pdf.record.retention.heading'));
  for (const entry of data.retention) {
    out.field(t.t(RETENTION_LABELS[entry.kind]), retentionText(t, entry));
  }
  out.field(
    t.t('pdf.record.retention.legalHolds'),
    t.t('pdf.record.retention.legalHoldsValue', { count: data.legalHolds }),
  );

  heading(t.t('pdf.record.safeguards.heading'));
  const yesNo = (value: boolean) => (value ? t.t('pdf.record.yes') : t.t('pdf.record.no'));
  out.field(t.t('pdf.record.safeguards.transit'), yesNo(deployment.https));
  out.field(t.t('pdf.record.safeguards.rest'), yesNo(deployment.encryptionAtRest));
  out.field(t.t('pdf.record.safeguards.secondFactor'), yesNo(institute.secondFactorForAdministrators));
  out.field(t.t('pdf.record.safeguards.secondReview'), yesNo(institute.secondReviewRequired));
  out.field(t.t('pdf.record.safeguards.access'), t.t('pdf.record.safeguards.accessValue'));
  out.field(t.t('pdf.record.safeguards.onDevice'), t.t('pdf.record.safeguards.onDeviceValue'));
  out.field(t.t('pdf.record.safeguards.minimisation'), t.t('pdf.record.safeguards.minimisationValue'));

  const pages = doc.getPages();
  const footerStart = out.text(t.t('pdf.record.footer', { time: when }));
  const footer = { face: regular, size: 8, color: GREY, direction };
  pages.forEach((page, index) => {
    const number = out.text(t.t('pdf.footer.page', { page: String(index + 1), pages: String(pages.length) }));
    out.say(page, footerStart, MARGIN, MARGIN - 20, footer);
    out.say(page, number, PAGE_WIDTH - MARGIN - regular.width(number, 8), MARGIN - 20, footer);
  });

  return doc.save({ objectsPerTick: Infinity });
}
