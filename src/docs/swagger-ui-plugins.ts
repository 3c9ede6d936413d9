// Swagger UI plugins for the reference pages. They run in the browser: @nestjs/swagger writes them
// into swagger-ui-init.js with Function#toString, so each is self-contained (no imports, no closures).

interface BrowserGlobals {
  SwaggerUIBundle: { plugins: { DownloadUrl: (system: unknown) => unknown } };
  document: { querySelector(selector: string): unknown };
  requestAnimationFrame(callback: () => void): void;
}

/** Swagger UI's own default plugin (the top bar's document link), kept beside ours. */
export function downloadUrl(system: unknown): unknown {
  return (globalThis as unknown as BrowserGlobals).SwaggerUIBundle.plugins.DownloadUrl(system);
}

/**
 * For an OpenAPI 3.1 document, Swagger UI's first resolution — of components.securitySchemes, asked
 * for as soon as the document is loaded — normalises the whole document (its ApiDOM refractor) before
 * the operations are drawn: about half of the customer reference's time to show its operations. This
 * holds that one resolution until the operations are on the page (or 2 s have passed), so the reader
 * sees them first; the Authorize dialog works as before once it has run.
 */
export function resolveSecurityAfterOperations(): unknown {
  const browser = globalThis as unknown as BrowserGlobals;
  return {
    statePlugins: {
      spec: {
        wrapActions: {
          requestResolvedSubtree: (original: (path: string[]) => unknown) => (path: string[]) => {
            if (path.join('/') !== 'components/securitySchemes') return original(path);
            const asked = Date.now();
            const whenShown = (): void => {
              if (browser.document.querySelector('.opblock') || Date.now() - asked > 2000) original(path);
              else browser.requestAnimationFrame(whenShown);
            };
            browser.requestAnimationFrame(whenShown);
            return undefined;
          },
        },
      },
    },
  };
}
