// webhooks list|deliveries: the account's endpoints and an endpoint's delivery log.
import type { MediaJobs } from '../client.js';
import type { WebhookDelivery, WebhookEndpoint } from '../types.js';
import { numberArg, parse, UsageError } from './args.js';
import { printList } from './account.js';
import { formatDate, plural, table } from './format.js';
import type { CliIo } from './io.js';

export function endpointsTable(endpoints: WebhookEndpoint[]): string {
  return table(
    ['ID', 'URL', 'EVENTS', 'STATUS', 'CREATED'],
    endpoints.map((endpoint) => [
      endpoint.id,
      endpoint.url,
      endpoint.events.join(','),
      endpoint.status,
      formatDate(endpoint.created_at),
    ]),
  );
}

export function deliveriesTable(deliveries: WebhookDelivery[]): string {
  return table(
    ['DELIVERY', 'EVENT', 'STATE', 'ATTEMPTS', 'LAST ERROR', 'CREATED'],
    deliveries.map((delivery) => [
      delivery.id,
      delivery.event,
      delivery.state,
      plural(delivery.attempt_count, 'attempt'),
      delivery.last_error ?? '',
      formatDate(delivery.created_at),
    ]),
  );
}

export async function webhooks(client: MediaJobs, args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { limit: { type: 'string' }, all: { type: 'boolean' } });
  const [action, endpointId] = positionals;
  const limit = numberArg('limit', values.limit);
  if (action === 'list') await printList(io, values, client.webhookEndpoints.list({ limit }), endpointsTable);
  else if (action === 'deliveries') {
    if (!endpointId) throw new UsageError('webhooks deliveries needs an endpoint id (we_…)');
    await printList(io, values, client.webhookEndpoints.deliveries(endpointId, { limit }), deliveriesTable);
  } else throw new UsageError('webhooks needs list or deliveries');
  return 0;
}
