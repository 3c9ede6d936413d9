import { useState } from 'react';
import { api, SCOPES, type ApiKey, type List } from '../api';
import { formatTime } from '../format';
import { useCanChange } from '../session';
import {
  CheckboxGroup,
  ConfirmDialog,
  EmptyState,
  ErrorNotice,
  Field,
  Loading,
  PageTitle,
  SecretOnce,
  StatusBadge,
  useAction,
  useLoad,
} from '../ui';

const SCOPE_HELP: Record<string, string> = {
  sdr2hdr: 'submit and read SDR→HDR10 jobs, upload',
  audio: 'submit and read speech loudness jobs, upload',
  account: 'balance, ledger, licences',
  keys: 'create, rotate and revoke keys',
  webhooks: 'webhook endpoints and events',
};

const GRACE_OPTIONS = [
  { seconds: 0, label: 'Revoke the old key now' },
  { seconds: 3600, label: 'Keep the old key working for 1 hour' },
  { seconds: 86400, label: 'Keep the old key working for 24 hours' },
  { seconds: 604800, label: 'Keep the old key working for 7 days' },
];

function keyStatus(key: ApiKey): string {
  const now = Date.now();
  if (key.revoked_at && Date.parse(key.revoked_at) <= now) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now) return 'expired';
  return 'active';
}

/** API keys: list, create (shown once), rotate with a grace period, revoke. One API call. */
export function KeysPage() {
  const canChange = useCanChange();
  const keys = useLoad('keys', () => api<List<ApiKey>>('GET', '/v1/account/api-keys', { query: { limit: 100 } }));
  const [shown, setShown] = useState<{ key: string; what: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [grace, setGrace] = useState(0);

  const revoke = useAction(async (key: ApiKey) => {
    await api('DELETE', `/v1/account/api-keys/${key.id}`);
    setRevoking(null);
    keys.reload();
  });
  const rotate = useAction(async (key: ApiKey) => {
    const created = await api<ApiKey>('POST', `/v1/account/api-keys/${key.id}/rotate`, {
      body: { grace_seconds: grace },
    });
    setRotating(null);
    setShown({
      key: created.key!,
      what: `Replacement for ${key.name ? `${key.name} (${key.prefix}…)` : `${key.prefix}…`}`,
    });
    keys.reload();
  });

  return (
    <>
      <PageTitle>API keys</PageTitle>
      <p>
        Keys authenticate your code (<code>X-API-Key</code>). The full key is shown once, when it is created; we keep
        only a hash.
      </p>
      {canChange ? (
        <CreateKey
          onCreated={(key) => {
            setShown({
              key: key.key!,
              what: `New key ${key.name ? `${key.name} (${key.prefix}…)` : `${key.prefix}…`}`,
            });
            keys.reload();
          }}
        />
      ) : (
        <p className="notice notice-info" role="status">
          Your role (viewer) can see the keys but not create, rotate or revoke them.
        </p>
      )}
      {shown && (
        <div className="card highlight">
          <h2>{shown.what}</h2>
          <SecretOnce
            label="Your new API key"
            value={shown.key}
            note="Copy it now and keep it somewhere safe: you will not see it again."
          />
          <button type="button" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </div>
      )}
      {revoke.error ? <ErrorNotice error={revoke.error} /> : null}
      {rotate.error ? <ErrorNotice error={rotate.error} /> : null}
      {keys.error ? <ErrorNotice error={keys.error} /> : null}
      {!keys.data ? (
        !keys.error && <Loading what="keys" />
      ) : keys.data.data.length === 0 ? (
        <EmptyState title="No API keys yet">
          {canChange ? 'Create one above, then send it as X-API-Key.' : 'Ask a developer or owner to create one.'}
        </EmptyState>
      ) : (
        <table className="stack">
          <caption className="visually-hidden">API keys of this account</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Scopes</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              {canChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.data.data.map((key) => {
              const status = keyStatus(key);
              return (
                <tr key={key.id}>
                  <td data-label="Key">
                    {key.name ? <span className="key-name">{key.name}</span> : <span className="hint">No name</span>}
                    <div>
                      <code className="id">{key.prefix}…</code>
                    </div>
                  </td>
                  <td data-label="Scopes">{key.scopes.join(', ')}</td>
                  <td data-label="Status">
                    <StatusBadge status={status} />
                    {status === 'active' && key.revoked_at && (
                      <span className="hint"> until {formatTime(key.revoked_at)}</span>
                    )}
                  </td>
                  <td data-label="Created">{formatTime(key.created_at)}</td>
                  <td data-label="Last used">{key.last_used_at ? formatTime(key.last_used_at) : 'never'}</td>
                  <td data-label="Expires">{key.expires_at ? formatTime(key.expires_at) : 'never'}</td>
                  {canChange && (
                    <td data-label="Actions">
                      <div className="actions">
                        {status === 'active' && !key.revoked_at && (
                          <button
                            type="button"
                            onClick={() => setRotating(key)}
                            aria-label={`Rotate key ${key.prefix}`}
                          >
                            Rotate
                          </button>
                        )}
                        {status === 'active' && (
                          // A key in a rotation's grace period can still be revoked now (as with the CLI).
                          <button
                            type="button"
                            className="danger"
                            onClick={() => setRevoking(key)}
                            aria-label={`${key.revoked_at ? 'Revoke now' : 'Revoke'} key ${key.prefix}`}
                          >
                            {key.revoked_at ? 'Revoke now' : 'Revoke'}
                          </button>
                        )}
                      </div>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke key ${revoking?.prefix ?? ''}…?`}
        confirmLabel="Revoke key"
        dismissLabel="Keep key"
        danger
        busy={revoke.busy}
        onConfirm={() => revoking && void revoke.run(revoking)}
        onCancel={() => setRevoking(null)}
      >
        <p>
          Every request with this key answers <code>revoked_api_key</code> from now on, on every server
          {revoking?.revoked_at ? (
            <> (instead of from {formatTime(revoking.revoked_at)}, when its grace period ends)</>
          ) : null}
          . This cannot be undone.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={rotating !== null}
        title={`Rotate key ${rotating?.prefix ?? ''}…?`}
        confirmLabel="Rotate key"
        dismissLabel="Keep key as it is"
        busy={rotate.busy}
        onConfirm={() => rotating && void rotate.run(rotating)}
        onCancel={() => setRotating(null)}
      >
        <p>A new key with the same scopes replaces this one. Give your code time to switch:</p>
        <div className="field">
          <label htmlFor="grace">Old key</label>
          <select id="grace" value={grace} onChange={(event) => setGrace(Number(event.target.value))}>
            {GRACE_OPTIONS.map((option) => (
              <option key={option.seconds} value={option.seconds}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
      </ConfirmDialog>
    </>
  );
}

/** A picked day (YYYY-MM-DD) as the moment a key expires: its start, 00:00 UTC. */
function expiryOf(day: string): string {
  return new Date(`${day}T00:00:00Z`).toISOString();
}

function CreateKey({ onCreated }: { onCreated: (key: ApiKey) => void }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([...SCOPES]);
  const [expires, setExpires] = useState('');
  const create = useAction(async () => {
    const key = await api<ApiKey>('POST', '/v1/account/api-keys', {
      body: {
        scopes,
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(expires ? { expires_at: expiryOf(expires) } : {}),
      },
    });
    setName('');
    setExpires('');
    onCreated(key);
  });
  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2>Create a key</h2>
      {create.error ? <ErrorNotice error={create.error} /> : null}
      <Field
        id="key-name"
        label="Name (optional)"
        value={name}
        onChange={setName}
        maxLength={100}
        hint="What the key is for, e.g. Render farm: the list shows it beside the key's prefix."
      />
      <CheckboxGroup
        legend="Scopes"
        idPrefix="scope"
        options={SCOPES}
        chosen={scopes}
        onChange={setScopes}
        describe={(scope) => SCOPE_HELP[scope]}
      />
      <Field
        id="expires"
        label="Expires (optional)"
        type="date"
        value={expires}
        onChange={setExpires}
        hint={
          expires
            ? `The key stops working at ${formatTime(expiryOf(expires))}: the start of that day, not its end.`
            : 'Leave empty for a key that does not expire. A key expires at 00:00 UTC of the day you pick.'
        }
      />
      <button type="submit" className="primary" disabled={create.busy || scopes.length === 0}>
        Create key
      </button>
    </form>
  );
}
