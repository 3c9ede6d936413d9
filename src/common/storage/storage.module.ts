import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LocalStorage, STORAGE } from './storage';

@Global()
@Module({
  providers: [
    { provide: STORAGE, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new LocalStorage(config.storageDir) },
  ],
  exports: [STORAGE],
})
export class StorageModule {}
