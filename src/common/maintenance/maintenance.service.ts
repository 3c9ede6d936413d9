import { Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface MaintenanceState {
  enabled: boolean;
  until: string | null;
}

const OFF: MaintenanceState = { enabled: false, until: null };

/**
 * Maintenance mode lives in Postgres (it must survive restarts) and each API instance re-reads it
 * every second, so an operator's switch reaches every instance within a second without a query
 * per request.
 */
@Injectable()
export class MaintenanceService implements OnApplicationBootstrap, OnApplicationShutdown {
  static readonly REFRESH_MS = 1000;
  private state: MaintenanceState = OFF;
  private timer?: NodeJS.Timeout;

  constructor(private readonly db: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.refreshOrKeep();
    this.timer = setInterval(() => void this.refreshOrKeep(), MaintenanceService.REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  /** The state in force now; an `until` in the past means maintenance is over. */
  current(): MaintenanceState {
    if (this.state.enabled && this.state.until && Date.parse(this.state.until) <= Date.now()) return OFF;
    return this.state;
  }

  async set(state: MaintenanceState): Promise<MaintenanceState> {
    await this.db.query(
      `INSERT INTO system_settings (key, value, updated_at) VALUES ('maintenance', $1, now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [JSON.stringify(state)],
    );
    this.state = state;
    return state;
  }

  /**
   * While PostgreSQL is unreachable the last state read stays in force: requests meet the outage in
   * their own queries (503), /health/ready reports it, and a log line per second would add nothing.
   */
  private async refreshOrKeep(): Promise<void> {
    try {
      await this.refresh();
    } catch {
      return;
    }
  }

  private async refresh(): Promise<void> {
    const rows: { value: MaintenanceState }[] = await this.db.query(
      `SELECT value FROM system_settings WHERE key = 'maintenance'`,
    );
    this.state = rows[0]?.value ?? OFF;
  }
}
