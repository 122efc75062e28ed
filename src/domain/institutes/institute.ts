export interface Institute {
  readonly id: number;
  readonly name: string;
  readonly shortName: string;
  readonly callbackUrl: string | null;
  readonly checkRequirementsEmailsEnabled: boolean;
  readonly reminderEmailsEnabled: boolean;
  readonly examLinkEmailsEnabled: boolean;
  readonly examChangedEmailsEnabled: boolean;
  readonly examFinalizedEmailsEnabled: boolean;
  readonly sessionRetentionPeriod: number | null;
  readonly defaultLanguage: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface NewInstitute {
  readonly name: string;
  readonly shortName: string;
}
