import { Global, Inject, Module, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LocalStorage } from './local-storage';
import { S3Storage } from './s3-storage';
import { STORAGE, type Storage } from './storage';

export function createStorage(config: AppConfig): Storage {
  const settings = config.storage;
  return settings.backend === 's3' ? new S3Storage(settings) : new LocalStorage(config.storageDir);
}

@Global()
@Module({
  providers: [{ provide: STORAGE, inject: [APP_CONFIG], useFactory: createStorage }],
  exports: [STORAGE],
})
export class StorageModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(STORAGE) private readonly storage: Storage) {}

  /** The folder or bucket exists before the first request or job (docs/api-decisions.md §11: created when missing). */
  async onApplicationBootstrap(): Promise<void> {
    await this.storage.prepare();
  }

  /** app.close() leaves no connection to the store open (a call after this would open a new one). */
  onApplicationShutdown(): void {
    this.storage.close();
  }
}
