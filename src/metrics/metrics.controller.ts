import { Controller, Get, Header, Inject, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Operational } from '../auth/auth.decorators';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { ApiError } from '../common/errors';
import { forwardedFurther, metricsAccess } from './metrics-access';
import { METRICS_CONTENT_TYPE, metricsRegistry } from './registry';

/** The API's Prometheus endpoint (README "Metrics"): METRICS_TOKEN, or loopback only in production. */
@ApiExcludeController()
@Operational()
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get()
  @Header('Content-Type', METRICS_CONTENT_TYPE)
  metrics(@Req() request: FastifyRequest): Promise<string> {
    const access = metricsAccess(this.config, {
      remoteAddress: request.ip,
      authorization: request.headers.authorization,
      forwardedFurther: forwardedFurther(request.headers, request.ips?.length ?? 1),
    });
    switch (access) {
      case 'allowed':
        return metricsRegistry.metrics();
      case 'missing_token':
        throw new ApiError('missing_api_key', {
          param: 'Authorization',
          message: 'Send the metrics token as Authorization: Bearer <METRICS_TOKEN>.',
        });
      case 'wrong_token':
        throw new ApiError('invalid_api_key', { param: 'Authorization', message: 'The metrics token is not valid.' });
      case 'not_loopback':
        // Without METRICS_TOKEN, production serves metrics to loopback clients only: to anyone else it does not exist.
        throw new ApiError('route_not_found');
    }
  }
}
