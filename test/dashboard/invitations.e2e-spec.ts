// Invitations seen from outside (issue 29 items 7 and 8): an anonymous "forgot password" for an invited
// email must not kill the invitation link an owner (or an operator) holds, and inviting an email that is
// a member of another account answers exactly like any invitation — the conflict is told only to the
// person who follows the link, when they accept.
import { call, startApi, type TestApi } from '../support/app';
import { expectError } from '../support/error-checks';
import { asMember, PASSWORD, redeem, signIn, uniqueEmail, type TestSession } from '../support/dashboard-session';

describe('invitations', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api?.close());

  /** An account whose first owner followed the operator's link. */
  async function newOwner(): Promise<{ email: string; session: TestSession }> {
    const email = uniqueEmail('owner');
    const created = await call(api, 'POST', '/v1/admin/accounts', {
      admin: true,
      body: { name: 'Invitations Ltd', plan: 'pro', owner_email: email },
    });
    expect(created.status).toBe(201);
    return { email, session: await redeem(api, created.body.owner_invite_url, PASSWORD) };
  }

  const invite = (owner: TestSession, email: string, role = 'developer') =>
    asMember(api, owner, 'POST', '/v1/account/members', { body: { email, role } });
  const forgot = (email: string) => call(api, 'POST', '/v1/password-links', { body: { email } });

  it("an anonymous reset request for an invited email leaves the owner's and the operator's links working", async () => {
    const owner = await newOwner();
    const email = uniqueEmail('invitee');
    const invited = await invite(owner.session, email);
    expect(invited.status).toBe(201);
    expect((await forgot(email)).status).toBe(202);
    // The request is handled after the answer: give it time to do whatever it does.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const joined = await redeem(api, invited.body.invite_url, PASSWORD);
    expect(joined.body.member.email).toBe(email);

    // The same for a link an operator issued for someone still invited.
    const second = uniqueEmail('invitee');
    expect((await invite(owner.session, second)).status).toBe(201);
    const operator = await call(api, 'POST', '/v1/admin/password-links', { admin: true, body: { email: second } });
    expect(operator.status).toBe(201);
    expect((await forgot(second)).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await redeem(api, operator.body.url, PASSWORD)).body.member.email).toBe(second);
  });

  it('once someone sets a password, every other link they had stops working', async () => {
    const owner = await newOwner();
    const email = uniqueEmail('invitee');
    const invited = await invite(owner.session, email);
    const operator = await call(api, 'POST', '/v1/admin/password-links', { admin: true, body: { email } });
    // The operator's link replaced the owner's (only the latest invitation works), and it sets the password.
    await redeem(api, operator.body.url, PASSWORD);
    const stale = await call(api, 'POST', '/v1/password-links/redeem', {
      body: { token: new URL(invited.body.invite_url).hash.slice('#token='.length), password: 'another passphrase' },
    });
    expectError(api, stale, 'invalid_parameter', 'token');
  });

  it("inviting another account's member answers like any invitation; accepting is refused with a clear error", async () => {
    const first = await newOwner();
    const second = await newOwner();
    const taken = uniqueEmail('taken');
    const inFirst = await invite(first.session, taken);
    await redeem(api, inFirst.body.invite_url, PASSWORD);

    const fresh = await invite(second.session, uniqueEmail('fresh'));
    const other = await invite(second.session, taken);
    // No oracle: the same status, the same shape, the same kind of member, whoever the email belongs to.
    expect(other.status).toBe(fresh.status);
    expect(Object.keys(other.body).sort()).toEqual(Object.keys(fresh.body).sort());
    expect(other.body).toMatchObject({ object: 'member', email: taken, status: 'invited', role: 'developer' });
    // Another account's owner, too, answers like anyone.
    const owners = await invite(second.session, first.email, 'viewer');
    expect(owners.status).toBe(201);
    expect(owners.body).toMatchObject({ status: 'invited', email: first.email });

    // The person accepts: they hold the link, they learn why it cannot be used, nothing changes.
    const token = new URL(other.body.invite_url).hash.slice('#token='.length);
    const inspected = await call(api, 'POST', '/v1/password-links/inspect', { body: { token } });
    expect(inspected.status).toBe(200);
    const accepted = await call(api, 'POST', '/v1/password-links/redeem', {
      body: { token, password: 'a different passphrase' },
    });
    expectError(api, accepted, 'invalid_parameter', 'token');
    expect(accepted.body.error.message).toMatch(/already a member of another mediajobs account/);
    // Their membership of the first account and its password are untouched.
    const session = await signIn(api, taken, PASSWORD);
    expect(session.body.member.email).toBe(taken);
    expect((await asMember(api, session, 'GET', '/v1/account/credits')).status).toBe(200);
    expectError(
      api,
      await call(api, 'POST', '/v1/sessions', { body: { email: taken, password: 'a different passphrase' } }),
      'invalid_credentials',
    );
    // The second account still lists them as invited; its owner may withdraw the invitation.
    const members = await asMember(api, second.session, 'GET', '/v1/account/members');
    const listed = members.body.data.find((member: { email: string }) => member.email === taken);
    expect(listed).toMatchObject({ status: 'invited' });
    expect((await asMember(api, second.session, 'DELETE', `/v1/account/members/${listed.id}`)).status).toBe(200);
    // Inviting someone already in your own account is still refused (no other tenant is involved).
    expectError(api, await invite(first.session, taken), 'invalid_parameter', 'email');
  });

  it('two accounts invite the same new person: the first link followed wins, the other is refused', async () => {
    const first = await newOwner();
    const second = await newOwner();
    const email = uniqueEmail('wanted');
    const a = await invite(first.session, email);
    const b = await invite(second.session, email);
    expect([a.status, b.status]).toEqual([201, 201]);
    await redeem(api, b.body.invite_url, PASSWORD);
    const late = await call(api, 'POST', '/v1/password-links/redeem', {
      body: { token: new URL(a.body.invite_url).hash.slice('#token='.length), password: PASSWORD },
    });
    expectError(api, late, 'invalid_parameter', 'token');
    // Forgot password now reaches the member who joined, never the dangling invitation.
    expect((await forgot(email)).status).toBe(202);
    expect((await signIn(api, email, PASSWORD)).body.account.id).toBeDefined();
  });
});
