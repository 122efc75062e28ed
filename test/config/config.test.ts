import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

describe('loadConfig', () => {
  it('uses the documented defaults when nothing is set', () => {
    const config = loadConfig({}, '/srv/invigil');
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.deepEqual(config.database, { kind: 'sqlite', path: '/srv/invigil/data/invigil.sqlite' });
    assert.equal(config.dataDir, '/srv/invigil/data');
    assert.equal(config.publicUrl, 'http://127.0.0.1:3000');
    assert.deepEqual(config.storage, { kind: 'local', root: path.join('/srv/invigil/data', 'files') });
    assert.equal(config.smtpUrl, undefined);
    assert.equal(config.mailFrom, 'Invigil <no-reply@localhost>');
    assert.equal(config.noncePolicy, 'signature');
    assert.equal(config.signatureWindowSeconds, 86400);
    assert.equal(config.logLevel, 'info');
    assert.equal(config.maxUploadBytes, 50 * 1024 * 1024);
    assert.equal(config.jobLeaseMs, 60_000);
    assert.equal(config.retentionDays, 30);
    assert.ok(Object.isFrozen(config));
  });

  it('reads every documented variable', () => {
    const config = loadConfig(
      {
        PORT: '8080',
        HOST: '0.0.0.0',
        DATABASE_URL: 'postgres://db.example:5432/invigil',
        DATA_DIR: '/var/lib/invigil',
        PUBLIC_URL: 'https://exams.example.org/',
        STORAGE_URL: 's3://bucket?endpoint=http://127.0.0.1:4568&region=eu-west-1',
        SMTP_URL: 'smtp://user:pass@mail.example:587',
        MAIL_FROM: 'Exams <exams@example.org>',
        NONCE_POLICY: 'strict',
        SIGNATURE_WINDOW_SECONDS: '300',
        LOG_LEVEL: 'debug',
        JOB_LEASE_MS: '1500',
        RETENTION_DAYS: '7',
      },
      '/srv',
    );
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.deepEqual(config.database, { kind: 'postgres', url: 'postgres://db.example:5432/invigil' });
    assert.equal(config.dataDir, '/var/lib/invigil');
    assert.equal(config.publicUrl, 'https://exams.example.org');
    assert.deepEqual(config.storage, {
      kind: 's3',
      bucket: 'bucket',
      endpoint: 'http://127.0.0.1:4568',
      region: 'eu-west-1',
    });
    assert.equal(config.smtpUrl, 'smtp://user:pass@mail.example:587');
    assert.equal(config.mailFrom, 'Exams <exams@example.org>');
    assert.equal(config.noncePolicy, 'strict');
    assert.equal(config.signatureWindowSeconds, 300);
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.jobLeaseMs, 1500);
    assert.equal(config.retentionDays, 7);
  });

  it('accepts JOB_LEASE_MS and RETENTION_DAYS at both ends of their ranges, and empty as unset', () => {
    assert.equal(loadConfig({ JOB_LEASE_MS: '1000' }).jobLeaseMs, 1000);
    assert.equal(loadConfig({ JOB_LEASE_MS: '3600000' }).jobLeaseMs, 3_600_000);
    assert.equal(loadConfig({ JOB_LEASE_MS: '' }).jobLeaseMs, 60_000);
    assert.equal(loadConfig({ RETENTION_DAYS: '1' }).retentionDays, 1);
    assert.equal(loadConfig({ RETENTION_DAYS: '3650' }).retentionDays, 3650);
    assert.equal(loadConfig({ RETENTION_DAYS: '' }).retentionDays, 30);
    assert.equal(loadConfig({}).auditRetentionDays, 365);
    assert.equal(loadConfig({ AUDIT_RETENTION_DAYS: '1' }).auditRetentionDays, 1);
    assert.equal(loadConfig({ AUDIT_RETENTION_DAYS: '3650' }).auditRetentionDays, 3650);
  });

  it('reads each NONCE_POLICY (signature, request, strict), empty as the default signature', () => {
    assert.equal(loadConfig({ NONCE_POLICY: 'signature' }).noncePolicy, 'signature');
    assert.equal(loadConfig({ NONCE_POLICY: 'request' }).noncePolicy, 'request');
    assert.equal(loadConfig({ NONCE_POLICY: 'strict' }).noncePolicy, 'strict');
    assert.equal(loadConfig({ NONCE_POLICY: '' }).noncePolicy, 'signature');
  });

  it('derives PUBLIC_URL from HOST and PORT', () => {
    assert.equal(loadConfig({ HOST: '::1', PORT: '4000' }).publicUrl, 'http://[::1]:4000');
  });

  const invalid: [string, Record<string, string>][] = [
    ['PORT', { PORT: 'eighty' }],
    ['PORT', { PORT: '70000' }],
    ['DATABASE_URL', { DATABASE_URL: 'mysql://localhost/x' }],
    ['DATABASE_URL', { DATABASE_URL: 'sqlite:' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'ftp://example.org' }],
    ['STORAGE_URL', { STORAGE_URL: 'gs://bucket' }],
    ['SMTP_URL', { SMTP_URL: 'mail.example:25' }],
    ['NONCE_POLICY', { NONCE_POLICY: 'loose' }],
    ['SIGNATURE_WINDOW_SECONDS', { SIGNATURE_WINDOW_SECONDS: '-5' }],
    ['SIGNATURE_WINDOW_SECONDS', { SIGNATURE_WINDOW_SECONDS: '0' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'verbose' }],
    ['INVIGIL_SECRET', { INVIGIL_SECRET: 'short' }],
    ['JOB_LEASE_MS', { JOB_LEASE_MS: '999' }],
    ['JOB_LEASE_MS', { JOB_LEASE_MS: '3600001' }],
    ['JOB_LEASE_MS', { JOB_LEASE_MS: '1.5s' }],
    ['JOB_LEASE_MS', { JOB_LEASE_MS: '-1500' }],
    ['RETENTION_DAYS', { RETENTION_DAYS: '0' }],
    ['RETENTION_DAYS', { RETENTION_DAYS: '3651' }],
    ['RETENTION_DAYS', { RETENTION_DAYS: '7.5' }],
    ['RETENTION_DAYS', { RETENTION_DAYS: 'forever' }],
    ['AUDIT_RETENTION_DAYS', { AUDIT_RETENTION_DAYS: '0' }],
    ['AUDIT_RETENTION_DAYS', { AUDIT_RETENTION_DAYS: '3651' }],
    ['AUDIT_RETENTION_DAYS', { AUDIT_RETENTION_DAYS: 'a year' }],
  ];
  for (const [name, env] of invalid) {
    it(`refuses an invalid ${name} (${Object.values(env)[0]}) with a message naming it`, () => {
      assert.throws(
        () => loadConfig(env),
        (error: unknown) => error instanceof ConfigError && error.message.startsWith(name),
      );
    });
  }
});
