// The texts of the mails members get: an invitation (to an account, with a role) and a password reset.
import type { MailMessage } from '../common/mail/mailer';

export function invitationMail(
  to: string,
  invitation: { accountName: string; role: string; url: string; expiresAt: Date },
): MailMessage {
  return {
    to,
    subject: `You are invited to ${invitation.accountName} on mediajobs`,
    text: [
      `You have been invited to the mediajobs account "${invitation.accountName}" as ${invitation.role}.`,
      '',
      'Choose your password here (the link works once, until ' + invitation.expiresAt.toISOString() + '):',
      '',
      invitation.url,
      '',
      'If you did not expect this invitation, ignore this mail.',
    ].join('\n'),
  };
}

export function resetMail(to: string, reset: { url: string; expiresAt: Date }): MailMessage {
  return {
    to,
    subject: 'Reset your mediajobs password',
    text: [
      'Someone (hopefully you) asked to reset the password of your mediajobs dashboard sign-in.',
      '',
      'Choose a new password here (the link works once, until ' + reset.expiresAt.toISOString() + '):',
      '',
      reset.url,
      '',
      'If you did not ask for this, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}
