import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';

export interface ForwardingProxy {
  url: string;
  stop(): Promise<void>;
}

/** Starts forwarding-proxy.js (a separate process) in front of `target`. */
export async function startForwardingProxy(target: string): Promise<ForwardingProxy> {
  const child = spawn(process.execPath, [join(__dirname, 'forwarding-proxy.js'), target], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(Number(out.trim()));
    });
    child.once('exit', (code) => reject(new Error(`the forwarding proxy exited (${code}) before listening`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ProxiedResponse {
  status: number;
  body: any;
}

/**
 * A request from a chosen loopback address (127.0.0.0/8 is all this machine's), so the proxy sees
 * distinct clients; `headers` may carry an X-Forwarded-For of the client's own (a CDN's, or forged).
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, localAddress });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: response.statusCode!, body });
      });
    });
    request.end();
  });
}
