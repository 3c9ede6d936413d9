// Debian's Chromium, headless, through playwright-core: the one launch every browser test uses
// (the flags that work with Debian's Chromium; passing --user-data-dir in args is refused, so the profile is a parameter).
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Headless as root, and no background connections (this machine's network is closed to them). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(
  profileDir: string,
  options: { acceptDownloads?: boolean } = {},
): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH).`);
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
    acceptDownloads: options.acceptDownloads ?? false,
  });
}
