import { Module } from '@nestjs/common';
import { MaintenanceService } from './maintenance.service';

/** One maintenance switch per process (it re-reads PostgreSQL every second). */
@Module({ providers: [MaintenanceService], exports: [MaintenanceService] })
export class MaintenanceModule {}
