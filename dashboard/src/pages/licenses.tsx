import { useState } from 'react';
import { api, type License, type List } from '../api';
import { formatTime } from '../format';
import { useCanChange } from '../session';
import {
  ConfirmDialog,
  EmptyState,
  ErrorNotice,
  Loading,
  Notice,
  PageTitle,
  Progress,
  StatusBadge,
  useAction,
  useLoad,
} from '../ui';

type Device = License['devices'][number];

/** The account's plugin licences and the devices holding their seats. One API call. */
export function LicensesPage() {
  const canChange = useCanChange();
  const licenses = useLoad('licenses', () => api<List<License>>('GET', '/v1/account/licenses'));
  const [target, setTarget] = useState<{ license: License; device: Device } | null>(null);
  const [freed, setFreed] = useState<string | null>(null);
  const deactivate = useAction(async ({ license, device }: { license: License; device: Device }) => {
    await api('POST', `/v1/account/licenses/${license.id}/devices/${device.activation_id}/deactivate`);
    setTarget(null);
    setFreed(`${device.name ?? device.device_id} is deactivated; its seat on ${license.key_prefix}… is free.`);
    licenses.reload();
  });

  return (
    <>
      <PageTitle>Licences</PageTitle>
      <p>
        Plugin licences of this account. Each machine that activates a licence takes a seat; deactivate one to free it.
      </p>
      {freed && <Notice tone="success">{freed}</Notice>}
      {deactivate.error ? <ErrorNotice error={deactivate.error} /> : null}
      {licenses.error ? <ErrorNotice error={licenses.error} /> : null}
      {!licenses.data ? (
        !licenses.error && <Loading what="licences" />
      ) : licenses.data.data.length === 0 ? (
        <EmptyState title="No plugin licences">
          Licences are issued by your mediajobs operator; once issued they appear here with their devices.
        </EmptyState>
      ) : (
        licenses.data.data.map((license) => (
          <section key={license.id} className="card" aria-labelledby={`license-${license.id}`}>
            <h2 id={`license-${license.id}`}>
              Licence <code>{license.key_prefix}…</code> <StatusBadge status={license.status} />
            </h2>
            <dl className="facts">
              <dt>Plan</dt>
              <dd>{license.plan}</dd>
              <dt>Expires</dt>
              <dd>{formatTime(license.expires_at)}</dd>
              <dt>Seats</dt>
              <dd>
                <Progress
                  label={`Seats in use on licence ${license.key_prefix}`}
                  value={license.active_devices}
                  max={license.max_devices}
                  text={`${license.active_devices} of ${license.max_devices} in use`}
                />
              </dd>
            </dl>
            {license.devices.length === 0 ? (
              <p className="empty-inline">No device is activated: install the plugin and enter the licence key.</p>
            ) : (
              <table className="stack">
                <caption className="visually-hidden">Devices on licence {license.key_prefix}</caption>
                <thead>
                  <tr>
                    <th scope="col">Device</th>
                    <th scope="col">Device id</th>
                    <th scope="col">Activated</th>
                    <th scope="col">Last seen</th>
                    {canChange && <th scope="col">Actions</th>}
                  </tr>
                </thead>
                <tbody>
                  {license.devices.map((device) => (
                    <tr key={device.activation_id}>
                      <td data-label="Device">{device.name ?? 'unnamed device'}</td>
                      <td data-label="Device id">
                        <code>{device.device_id}</code>
                      </td>
                      <td data-label="Activated">{formatTime(device.first_seen_at)}</td>
                      <td data-label="Last seen">{formatTime(device.last_seen_at)}</td>
                      {canChange && (
                        <td data-label="Actions">
                          <button
                            type="button"
                            className="danger"
                            onClick={() => setTarget({ license, device })}
                            aria-label={`Deactivate ${device.name ?? device.device_id}`}
                          >
                            Deactivate
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        ))
      )}
      <ConfirmDialog
        open={target !== null}
        title={`Deactivate ${target?.device.name ?? target?.device.device_id ?? ''}?`}
        confirmLabel="Deactivate device"
        dismissLabel="Keep device"
        danger
        busy={deactivate.busy}
        onConfirm={() => target && void deactivate.run(target)}
        onCancel={() => setTarget(null)}
      >
        <p>
          The seat is freed for another machine. This device stops working when it next checks the licence online (
          <code>device_not_activated</code>); it can activate again if a seat is free.
        </p>
      </ConfirmDialog>
    </>
  );
}
