// Reading an Ed25519 private key from configuration: in common, because the configuration checks it at
// start-up (LICENSE_SIGNING_KEY) and the licence signer uses it, and common imports no feature module.
import { createPrivateKey, type KeyObject } from 'node:crypto';

/** Reads LICENSE_SIGNING_KEY: base64 of a PKCS#8 DER Ed25519 private key (what scripts/dev-setup.js writes). */
export function parseSigningKey(base64: string): KeyObject {
  const der = Buffer.from(base64.trim(), 'base64');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } catch {
    throw new Error('it is not base64 of a PKCS#8 DER private key');
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`it is a ${key.asymmetricKeyType ?? 'unknown'} key, not Ed25519`);
  return key;
}
