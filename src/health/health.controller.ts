import { Controller, Get, Inject } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Operational } from '../auth/auth.decorators';
import { ApiError } from '../common/errors';
import { REDIS, type RedisClient } from '../common/redis/redis.module';
import { ApiSuccess } from '../common/openapi/api-success';

const CHECK_TIMEOUT_MS = 1500;

function within<T>(promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error('health check timed out')), CHECK_TIMEOUT_MS).unref(),
    ),
  ]);
}

class LiveResponse {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
}

class ReadyChecks {
  @ApiProperty({ enum: ['up'] }) postgres: 'up';
  @ApiProperty({ enum: ['up'] }) redis: 'up';
}

class ReadyResponse {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ type: ReadyChecks }) checks: ReadyChecks;
}

@ApiTags('operations')
@Operational()
@Controller('health')
export class HealthController {
  constructor(
    private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiSuccess(200, LiveResponse, 'Alive')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer (503 service_unavailable otherwise)' })
  @ApiSuccess(200, ReadyResponse, 'Ready to serve')
  async ready(): Promise<ReadyResponse> {
    const [postgres, redis] = await Promise.allSettled([within(this.db.query('SELECT 1')), within(this.redis.ping())]);
    const down = [
      postgres.status === 'rejected' ? 'postgres' : null,
      redis.status === 'rejected' ? 'redis' : null,
    ].filter((name): name is string => name !== null);
    if (down.length) {
      throw new ApiError('service_unavailable', {
        message: 'A dependency of the service is unavailable. Retry with backoff.',
        details: { down },
      });
    }
    return { status: 'ok', checks: { postgres: 'up', redis: 'up' } };
  }
}
