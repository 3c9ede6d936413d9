import { Controller, Get, Module, Post } from '@nestjs/common';
import { DiscoveryModule, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Public, RequireScope } from './auth.decorators';
import { declareRouteAccess } from './route-access';

@RequireScope('sdr2hdr')
@Controller('declared')
class DeclaredController {
  @Get()
  read(): string {
    return 'read';
  }

  @Public()
  @Post()
  write(): string {
    return 'write';
  }
}

@Controller('undeclared')
class UndeclaredController {
  @Get()
  forgotten(): string {
    return 'forgotten';
  }
}

async function appWith(controllers: (new () => unknown)[]): Promise<NestFastifyApplication> {
  @Module({ imports: [DiscoveryModule], controllers })
  class TestModule {}
  return NestFactory.create<NestFastifyApplication>(TestModule, new FastifyAdapter(), { logger: false });
}

describe('declareRouteAccess', () => {
  it("gives each Fastify route its handler's or its controller's declaration (the handler's wins)", async () => {
    const app = await appWith([DeclaredController]);
    const seen = new Map<string, unknown>();
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (route) => {
        seen.set(`${String(route.method)} ${route.url}`, route.config?.access);
      });
    declareRouteAccess(app);
    await app.init();
    expect(seen.get('GET /declared')).toEqual({ kind: 'api_key', scopes: ['sdr2hdr'] });
    expect(seen.get('HEAD /declared')).toEqual({ kind: 'api_key', scopes: ['sdr2hdr'] });
    expect(seen.get('POST /declared')).toEqual({ kind: 'public' });
    await app.close();
  });

  it('stops the start-up at a route that declares no access rule', async () => {
    const app = await appWith([DeclaredController, UndeclaredController]);
    expect(() => declareRouteAccess(app)).toThrow(
      'Route UndeclaredController.forgotten declares no access rule (see auth.decorators.ts)',
    );
    await app.close();
  });
});
