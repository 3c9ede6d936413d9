// The process's one Prometheus registry (API or worker): every mediajobs_* series and Node's defaults
// (event-loop lag, heap, RSS, GC) register here; /metrics renders it.
import { collectDefaultMetrics, Registry } from 'prom-client';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

export const METRICS_CONTENT_TYPE = metricsRegistry.contentType;
