import type { MigrationInterface, QueryRunner } from 'typeorm';

// Invitations without a cross-tenant oracle (issue 29 items 7 and 8).
// - One person, one account still holds for members who joined (signing in needs no account picker), but an
//   email may be *invited* by several accounts: inviting an address that is another account's member
//   answers like any invitation, and the conflict is told to the person who follows the link.
// - A link requested anonymously ("forgot password") is marked, so a later request replaces only such
//   links and never the invitation an owner or an operator handed out.
export class InvitationsAcrossAccounts1765410000000 implements MigrationInterface {
  name = 'InvitationsAcrossAccounts1765410000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE members DROP CONSTRAINT members_email_key`);
    await q.query(`CREATE UNIQUE INDEX members_account_email_idx ON members (account_id, email)`);
    await q.query(`CREATE UNIQUE INDEX members_joined_email_idx ON members (email) WHERE joined_at IS NOT NULL`);
    await q.query(`ALTER TABLE password_links ADD COLUMN requested boolean NOT NULL DEFAULT false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE password_links DROP COLUMN requested`);
    // Fails while an email is invited by two accounts: withdraw one of the invitations first.
    await q.query(`DROP INDEX members_joined_email_idx`);
    await q.query(`DROP INDEX members_account_email_idx`);
    await q.query(`ALTER TABLE members ADD CONSTRAINT members_email_key UNIQUE (email)`);
  }
}
