// How numbers, money, sizes and times read on the dashboard (en-GB: 14 Nov 2025, 09:30).
const number = new Intl.NumberFormat('en-GB');
// Prices are in US dollars: written the way their users read them ($12.50, not US$12.50).
const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });
const dateTime = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
const date = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone: 'UTC' });

export const formatNumber = (value: number): string => number.format(value);
export const formatUsd = (value: number): string => usd.format(value);
export const formatCredits = (value: number): string => `${number.format(value)} credit${value === 1 ? '' : 's'}`;

/** UTC, said so: every time the API gives is UTC. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? `${dateTime.format(new Date(iso))} UTC` : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? date.format(new Date(iso)) : '—';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds * 10) / 10} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds % 60)} s`;
}

export function percent(part: number, whole: number): number {
  return whole > 0 ? Math.min(100, Math.round((part / whole) * 100)) : 0;
}

export const STATUS_LABELS: Record<string, string> = {
  queued: 'Queued',
  processing: 'Processing',
  succeeded: 'Succeeded',
  partially_succeeded: 'Partly succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  pending: 'Pending',
  delivered: 'Delivered',
  active: 'Active',
  invited: 'Invited',
  expired: 'Expired',
  revoked: 'Revoked',
  enabled: 'Enabled',
  disabled: 'Disabled',
};
