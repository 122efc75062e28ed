import type { LtiLaunch } from '../lti/launch.ts';

/**
 * A port: verifies an LTI 1.1 launch (the OAuth 1.0a signed form of `POST /lti/launch`) and reads it
 * into an LtiLaunch. The implementation is src/lti/oauth1.ts (verifyLti11Launch), which app.ts binds
 * to the database, the clock, the server key and PUBLIC_URL. Returns the launch; throws
 * LaunchRefused.
 */
export type Lti11Verifier = (request: {
  readonly method: string;
  readonly params: Record<string, string>;
}) => Promise<LtiLaunch>;
