// Outgoing mail (nodemailer over SMTP_URL). Without SMTP_URL nothing is sent: the links a mail
// would carry are also returned to whoever created them (the admin API and CLI, the owner's invite).
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { createTransport, type Transporter } from 'nodemailer';
import { APP_CONFIG, type AppConfig } from '../config/config';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger(Mailer.name);
  private readonly transport: Transporter | null;
  private readonly pending = new Set<Promise<void>>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? createTransport(config.smtpUrl, { from: config.mailFrom }) : null;
  }

  get enabled(): boolean {
    return this.transport !== null;
  }

  /**
   * Sends in the background: the request that asked for it neither waits for the SMTP server nor
   * fails with it (and a "forgot password" answer takes as long whether a mail goes out or not).
   * A failure is logged with the recipient's domain only; the message (which carries a link) never.
   */
  sendLater(message: MailMessage): void {
    if (!this.transport) return;
    const sending: Promise<void> = this.transport.sendMail(message).then(
      () => undefined,
      (error: unknown) => {
        this.logger.warn(
          {
            err: error instanceof Error ? { message: error.message } : String(error),
            to_domain: message.to.split('@')[1],
          },
          'mail not sent',
        );
      },
    );
    this.pending.add(sending);
    void sending.finally(() => this.pending.delete(sending));
  }

  /** Mails still on their way go out before the process ends (the admin CLI exits right after its command). */
  async onApplicationShutdown(): Promise<void> {
    if (this.pending.size) {
      await Promise.race([
        Promise.allSettled([...this.pending]),
        new Promise((resolve) => setTimeout(resolve, 10_000)),
      ]);
    }
    this.transport?.close();
  }
}
