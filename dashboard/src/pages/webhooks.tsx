import { useState } from 'react';
import { api, WEBHOOK_EVENTS, type Delivery, type List, type WebhookEndpoint } from '../api';
import { formatTime } from '../format';
import { Link, navigate } from '../router';
import { useCanChange } from '../session';
import {
  CheckboxGroup,
  ConfirmDialog,
  EmptyState,
  ErrorNotice,
  Field,
  Loading,
  Notice,
  PageTitle,
  SecretOnce,
  StatusBadge,
  useAction,
  useLoad,
} from '../ui';

const POLL_MS = 1500;

/** Webhook endpoints: the list and a form to add one (its signing secret shown once). One API call. */
export function WebhooksPage() {
  const canChange = useCanChange();
  const endpoints = useLoad('webhooks', () =>
    api<List<WebhookEndpoint>>('GET', '/v1/webhook-endpoints', { query: { limit: 100 } }),
  );
  const [created, setCreated] = useState<WebhookEndpoint | null>(null);
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <p>
        We POST each job's outcome to your endpoints, signed per{' '}
        <a href="https://www.standardwebhooks.com/" target="_blank" rel="noreferrer">
          Standard Webhooks
        </a>
        , and retry until they answer 2xx.
      </p>
      {canChange && (
        <CreateEndpoint
          onCreated={(endpoint) => {
            setCreated(endpoint);
            endpoints.reload();
          }}
        />
      )}
      {created?.secret && (
        <div className="card highlight">
          <h2 className="url">Endpoint added: {created.url}</h2>
          <SecretOnce
            label="Signing secret"
            value={created.secret}
            note="Verify every delivery with it. Copy it now: you will not see it again (rotate it to get a new one)."
          />
          <button type="button" onClick={() => navigate(`/webhooks/${created.id}`)}>
            Open the endpoint
          </button>
        </div>
      )}
      {endpoints.error ? <ErrorNotice error={endpoints.error} /> : null}
      {!endpoints.data ? (
        !endpoints.error && <Loading what="endpoints" />
      ) : endpoints.data.data.length === 0 ? (
        <EmptyState title="No webhook endpoints yet">
          {canChange
            ? 'Add the URL of your receiver above, then send it a test event.'
            : 'A developer or owner can add one. Until then, poll job status with the API.'}
        </EmptyState>
      ) : (
        <table className="stack">
          <caption className="visually-hidden">Webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Status</th>
              <th scope="col">Added</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.data.data.map((endpoint) => (
              <tr key={endpoint.id}>
                <td data-label="URL" className="url">
                  <Link to={`/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
                </td>
                <td data-label="Events">{endpoint.events.join(', ')}</td>
                <td data-label="Status">
                  <StatusBadge status={endpoint.status} />
                </td>
                <td data-label="Added">{formatTime(endpoint.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function CreateEndpoint({ onCreated }: { onCreated: (endpoint: WebhookEndpoint) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>([...WEBHOOK_EVENTS]);
  const create = useAction(async () => {
    onCreated(await api<WebhookEndpoint>('POST', '/v1/webhook-endpoints', { body: { url, events } }));
    setUrl('');
  });
  return (
    <form
      className="card"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2>Add an endpoint</h2>
      {create.error ? <ErrorNotice error={create.error} /> : null}
      <Field
        id="endpoint-url"
        label="Endpoint URL"
        type="url"
        required
        placeholder="https://example.com/hooks/mediajobs"
        className="wide"
        value={url}
        onChange={setUrl}
      />
      <CheckboxGroup legend="Events" idPrefix="event" options={WEBHOOK_EVENTS} chosen={events} onChange={setEvents} />
      <button type="submit" className="primary" disabled={create.busy || events.length === 0}>
        Add endpoint
      </button>
    </form>
  );
}

/** One endpoint: test event, secret rotation, deletion, and its delivery log with Redeliver. Two API calls. */
export function WebhookPage({ id }: { id: string }) {
  const canChange = useCanChange();
  const endpoint = useLoad(`webhook:${id}`, () =>
    api<WebhookEndpoint>('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}`),
  );
  const deliveries = useLoad(
    `deliveries:${id}`,
    () =>
      api<List<Delivery>>('GET', `/v1/webhook-endpoints/${encodeURIComponent(id)}/deliveries`, {
        query: { limit: 50 },
      }),
    { pollMs: POLL_MS, keepPolling: (page) => page.data.some((delivery) => delivery.state === 'pending') },
  );
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);

  const sendTest = useAction(async () => {
    await api('POST', `/v1/webhook-endpoints/${encodeURIComponent(id)}/test`);
    setNotice('Test event queued: it appears below within a second or two.');
    deliveries.reload();
  });
  const rotate = useAction(async () => {
    const rotated = await api<WebhookEndpoint>('POST', `/v1/webhook-endpoints/${encodeURIComponent(id)}/rotate-secret`);
    setSecret(rotated.secret ?? null);
    endpoint.reload();
  });
  const remove = useAction(async () => {
    await api('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
    navigate('/webhooks');
  });
  const redeliver = useAction(async (delivery: Delivery) => {
    await api('POST', `/v1/events/${encodeURIComponent(delivery.event_id)}/redeliver`, { query: { endpoint_id: id } });
    setNotice(`Event ${delivery.event_id} queued again.`);
    deliveries.reload();
  });

  const failure = sendTest.error ?? rotate.error ?? remove.error ?? redeliver.error;
  return (
    <>
      <PageTitle>Webhook endpoint</PageTitle>
      <p>
        <Link to="/webhooks">← All endpoints</Link>
      </p>
      {endpoint.error ? <ErrorNotice error={endpoint.error} /> : null}
      {!endpoint.data ? (
        !endpoint.error && <Loading what="the endpoint" />
      ) : (
        <section className="card" aria-labelledby="endpoint-heading">
          <h2 id="endpoint-heading" className="url">
            {endpoint.data.url}
          </h2>
          <dl className="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={endpoint.data.status} />
              {endpoint.data.disabled_reason && <span className="hint"> {endpoint.data.disabled_reason}</span>}
            </dd>
            <dt>Events</dt>
            <dd>{endpoint.data.events.join(', ')}</dd>
            <dt>Added</dt>
            <dd>{formatTime(endpoint.data.created_at)}</dd>
            {endpoint.data.previous_secret_expires_at && (
              <>
                <dt>Previous secret</dt>
                <dd>also signs deliveries until {formatTime(endpoint.data.previous_secret_expires_at)}</dd>
              </>
            )}
          </dl>
          {canChange && (
            <div className="actions">
              <button type="button" className="primary" onClick={() => void sendTest.run()} disabled={sendTest.busy}>
                Send test event
              </button>
              <button type="button" onClick={() => void rotate.run()} disabled={rotate.busy}>
                Rotate secret
              </button>
              <button type="button" className="danger" onClick={() => setDeleting(true)}>
                Delete endpoint
              </button>
            </div>
          )}
        </section>
      )}
      {secret && (
        <div className="card highlight">
          <SecretOnce
            label="New signing secret"
            value={secret}
            note="For 24 hours deliveries carry signatures with both the old and the new secret. Copy it now: you will not see it again."
          />
        </div>
      )}
      {notice && <Notice tone="success">{notice}</Notice>}
      {failure ? <ErrorNotice error={failure} /> : null}

      <section aria-labelledby="deliveries-heading">
        <h2 id="deliveries-heading">Delivery log</h2>
        {deliveries.error ? <ErrorNotice error={deliveries.error} /> : null}
        {!deliveries.data ? (
          !deliveries.error && <Loading what="deliveries" />
        ) : deliveries.data.data.length === 0 ? (
          <EmptyState title="Nothing delivered yet">
            {canChange
              ? 'Send a test event to check your receiver, or run a job.'
              : 'Deliveries appear here when jobs end.'}
          </EmptyState>
        ) : (
          <table className="stack">
            <caption className="visually-hidden">Deliveries to this endpoint, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">State</th>
                <th scope="col">Attempts (time · status · duration · error)</th>
                <th scope="col">Next attempt</th>
                {canChange && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((delivery) => (
                <tr key={delivery.id} data-delivery={delivery.id}>
                  <td data-label="Event">
                    <code>{delivery.event}</code>
                    <br />
                    <code className="hint id">{delivery.event_id}</code>
                    {delivery.redelivery && <span className="hint"> (redelivery)</span>}
                  </td>
                  <td data-label="State">
                    <StatusBadge status={delivery.state} />
                  </td>
                  <td data-label="Attempts">
                    {delivery.attempts.length === 0 ? (
                      'not attempted yet'
                    ) : (
                      <ol className="attempts">
                        {delivery.attempts.map((attempt) => (
                          <li key={attempt.attempt}>
                            {formatTime(attempt.attempted_at)} · {attempt.status_code ?? 'no answer'} ·{' '}
                            {attempt.duration_ms} ms
                            {attempt.error && <> · {attempt.error}</>}
                          </li>
                        ))}
                      </ol>
                    )}
                  </td>
                  <td data-label="Next attempt">
                    {delivery.state === 'pending' ? formatTime(delivery.next_attempt_at) : '—'}
                  </td>
                  {canChange && (
                    <td data-label="Actions">
                      <button
                        type="button"
                        onClick={() => void redeliver.run(delivery)}
                        disabled={redeliver.busy || endpoint.data?.status === 'disabled'}
                        aria-label={`Redeliver ${delivery.event} ${delivery.event_id}`}
                      >
                        Redeliver
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <ConfirmDialog
        open={deleting}
        title="Delete this endpoint?"
        confirmLabel="Delete endpoint"
        dismissLabel="Keep endpoint"
        danger
        busy={remove.busy}
        onConfirm={() => void remove.run()}
        onCancel={() => setDeleting(false)}
      >
        <p>Nothing more is sent to it, and its delivery log is deleted with it.</p>
      </ConfirmDialog>
    </>
  );
}
