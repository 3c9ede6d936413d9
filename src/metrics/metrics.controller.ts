import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Operational } from '../auth/auth.decorators';
import { metricsRegistry } from './http-metrics';

@ApiExcludeController()
@Operational()
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
