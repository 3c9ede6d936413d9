import { useState } from 'react';
import { api, type Account, type Credits, type List, type Member, type Role } from '../api';
import { formatTime, formatUsd } from '../format';
import { useRole, useSession } from '../session';
import {
  ConfirmDialog,
  ErrorNotice,
  Loading,
  Notice,
  PageTitle,
  SecretOnce,
  StatusBadge,
  useAction,
  useLoad,
} from '../ui';

const ROLE_HELP: Record<Role, string> = {
  owner: 'everything, including members and the spend cap',
  developer: 'keys, jobs, webhooks and licences',
  viewer: 'reads only',
};

/** Owners only: the monthly spend cap, members and invitations. Three API calls. */
export function SettingsPage() {
  const role = useRole();
  if (role !== 'owner') {
    return (
      <>
        <PageTitle>Settings</PageTitle>
        <Notice>Only owners of the account change its settings and members.</Notice>
      </>
    );
  }
  return <OwnerSettings />;
}

function OwnerSettings() {
  const { session } = useSession();
  const loaded = useLoad('settings', () =>
    Promise.all([
      api<Account>('GET', '/v1/account'),
      api<List<Member>>('GET', '/v1/account/members'),
      api<Credits>('GET', '/v1/account/credits'),
    ]),
  );
  const [invited, setInvited] = useState<Member | null>(null);
  const [removing, setRemoving] = useState<Member | null>(null);
  const [email, setEmail] = useState('');
  const [newRole, setNewRole] = useState<Role>('developer');

  const invite = useAction(async () => {
    setInvited(await api<Member>('POST', '/v1/account/members', { body: { email, role: newRole } }));
    setEmail('');
    loaded.reload();
  });
  const changeRole = useAction(async (member: Member, role: Role) => {
    await api('PATCH', `/v1/account/members/${member.id}`, { body: { role } });
    loaded.reload();
  });
  const resend = useAction(async (member: Member) => {
    setInvited(await api<Member>('POST', `/v1/account/members/${member.id}/resend-invitation`));
    loaded.reload();
  });
  const remove = useAction(async (member: Member) => {
    await api('DELETE', `/v1/account/members/${member.id}`);
    setRemoving(null);
    loaded.reload();
  });
  const failure = changeRole.error ?? resend.error ?? remove.error;
  const owners = loaded.data?.[1].data.filter((member) => member.role === 'owner').length ?? 0;

  return (
    <>
      <PageTitle>Settings</PageTitle>
      {loaded.error ? <ErrorNotice error={loaded.error} /> : null}
      {!loaded.data ? (
        !loaded.error && <Loading what="settings" />
      ) : (
        <>
          <SpendCap account={loaded.data[0]} credits={loaded.data[2]} onSaved={loaded.reload} />
          <section className="card" aria-labelledby="members-heading">
            <h2 id="members-heading">Members</h2>
            {failure ? <ErrorNotice error={failure} /> : null}
            <table className="stack">
              <caption className="visually-hidden">Members and invitations</caption>
              <thead>
                <tr>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Last sign-in</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {loaded.data[1].data.map((member) => {
                  // The API refuses to remove or demote an account's last owner: not offered, and said why.
                  const onlyOwner = member.role === 'owner' && owners === 1;
                  return (
                    <tr key={member.id}>
                      <td data-label="Email">
                        {member.email}
                        {member.id === session.member.id && <span className="hint"> (you)</span>}
                      </td>
                      <td data-label="Role">
                        <label className="visually-hidden" htmlFor={`role-${member.id}`}>
                          Role of {member.email}
                        </label>
                        <select
                          id={`role-${member.id}`}
                          value={member.role}
                          disabled={changeRole.busy || onlyOwner}
                          aria-describedby={onlyOwner ? `only-owner-${member.id}` : undefined}
                          onChange={(event) => void changeRole.run(member, event.target.value as Role)}
                        >
                          <option value="owner">owner</option>
                          <option value="developer">developer</option>
                          <option value="viewer">viewer</option>
                        </select>
                      </td>
                      <td data-label="Status">
                        <StatusBadge status={member.status} />
                        {member.status === 'invited' && member.invitation_expires_at && (
                          <span className="hint">
                            {' '}
                            {Date.parse(member.invitation_expires_at) > Date.now()
                              ? `link valid until ${formatTime(member.invitation_expires_at)}`
                              : 'link expired'}
                          </span>
                        )}
                      </td>
                      <td data-label="Last sign-in">
                        {member.last_sign_in_at ? formatTime(member.last_sign_in_at) : 'never'}
                      </td>
                      <td data-label="Actions">
                        <div className="actions">
                          {member.status === 'invited' && (
                            <button
                              type="button"
                              onClick={() => void resend.run(member)}
                              aria-label={`Resend invitation to ${member.email}`}
                            >
                              Resend invitation
                            </button>
                          )}
                          {onlyOwner ? (
                            <span className="hint" id={`only-owner-${member.id}`}>
                              The only owner: make another member owner to remove or demote them.
                            </span>
                          ) : (
                            <button
                              type="button"
                              className="danger"
                              onClick={() => setRemoving(member)}
                              aria-label={`${member.status === 'invited' ? 'Withdraw' : 'Remove'} ${member.email}`}
                            >
                              {member.status === 'invited' ? 'Withdraw' : 'Remove'}
                            </button>
                          )}
                        </div>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <form
              onSubmit={(event) => {
                event.preventDefault();
                void invite.run();
              }}
            >
              <h3>Invite someone</h3>
              {invite.error ? <ErrorNotice error={invite.error} /> : null}
              <div className="field">
                <label htmlFor="invite-email">Email</label>
                <input
                  id="invite-email"
                  type="email"
                  required
                  value={email}
                  onChange={(event) => setEmail(event.target.value)}
                />
              </div>
              <fieldset>
                <legend>Role</legend>
                {(['owner', 'developer', 'viewer'] as const).map((value) => (
                  <div className="check" key={value}>
                    <input
                      id={`invite-role-${value}`}
                      type="radio"
                      name="invite-role"
                      checked={newRole === value}
                      onChange={() => setNewRole(value)}
                    />
                    <label htmlFor={`invite-role-${value}`}>
                      {value} <span className="hint">— {ROLE_HELP[value]}</span>
                    </label>
                  </div>
                ))}
              </fieldset>
              <button type="submit" className="primary" disabled={invite.busy}>
                Send invitation
              </button>
            </form>
            {invited?.invite_url && (
              <div className="card highlight">
                <p role="status">
                  Invitation for {invited.email} ({invited.role}) created; it is mailed when the server has SMTP set up.
                </p>
                <SecretOnce
                  label="Invitation link"
                  value={invited.invite_url}
                  note="Works once, for 24 hours. You can also send it yourself."
                />
              </div>
            )}
          </section>
        </>
      )}
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.email ?? ''}?`}
        confirmLabel={removing?.status === 'invited' ? 'Withdraw invitation' : 'Remove member'}
        dismissLabel={removing?.status === 'invited' ? 'Keep invitation' : 'Keep member'}
        danger
        busy={remove.busy}
        onConfirm={() => removing && void remove.run(removing)}
        onCancel={() => setRemoving(null)}
      >
        <p>
          They are signed out at once and can no longer sign in to this account. API keys they created keep working.
        </p>
      </ConfirmDialog>
    </>
  );
}

function SpendCap({ account, credits, onSaved }: { account: Account; credits: Credits; onSaved: () => void }) {
  const [value, setValue] = useState(account.spend_limit_usd === null ? '' : String(account.spend_limit_usd));
  const [saved, setSaved] = useState<string | null>(null);
  const save = useAction(async (limit: number | null) => {
    const updated = await api<Account>('PATCH', '/v1/account', { body: { spend_limit_usd: limit } });
    setSaved(
      updated.spend_limit_usd === null
        ? 'The spend cap is removed.'
        : `The spend cap is now ${formatUsd(updated.spend_limit_usd)} a month.`,
    );
    setValue(updated.spend_limit_usd === null ? '' : String(updated.spend_limit_usd));
    onSaved();
  });
  return (
    <section className="card" aria-labelledby="cap-heading">
      <h2 id="cap-heading">Monthly spend cap</h2>
      <p>
        A job that would take this month's charges past the cap is refused with <code>spend_limit_exceeded</code>: a
        safety net against a runaway script or a leaked key. Now:{' '}
        <strong>{account.spend_limit_usd === null ? 'no cap' : formatUsd(account.spend_limit_usd)}</strong>.
      </p>
      {save.error ? <ErrorNotice error={save.error} /> : null}
      {saved && <Notice tone="success">{saved}</Notice>}
      {value !== '' && Number(value) < credits.spent_usd && (
        <Notice tone="warning">
          This month's charges are already {formatUsd(credits.spent_usd)}, more than a cap of {formatUsd(Number(value))}
          . With it, every new job is refused with <code>spend_limit_exceeded</code> until the month resets on{' '}
          {formatTime(credits.period_resets_at)} or you raise the cap. Jobs already running are not stopped.
        </Notice>
      )}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void save.run(Number(value));
        }}
      >
        <div className="field inline">
          <label htmlFor="spend-cap">Cap in USD per month</label>
          <input
            id="spend-cap"
            type="number"
            inputMode="decimal"
            min={0}
            step={0.01}
            required
            value={value}
            onChange={(event) => setValue(event.target.value)}
          />
          <button type="submit" className="primary" disabled={save.busy}>
            Save cap
          </button>
          {account.spend_limit_usd !== null && (
            <button type="button" onClick={() => void save.run(null)} disabled={save.busy}>
              Remove cap
            </button>
          )}
        </div>
      </form>
    </section>
  );
}
