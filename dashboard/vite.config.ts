// The dashboard is served by the API under /dashboard (src/dashboard/setup-dashboard.ts), so it is
// built for that base. `npm run dev -w dashboard` serves it with hot reload and sends /v1 and /docs
// to an API on API_URL (default http://127.0.0.1:3000).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const api = process.env.API_URL ?? 'http://127.0.0.1:3000';

export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    target: 'es2022',
    // No inline helper: the page's Content-Security-Policy allows scripts from files only.
    modulePreload: { polyfill: false },
    sourcemap: false,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    // Same origin as the app for the browser; the API sees PUBLIC_BASE_URL's origin in dev only if
    // it is started with PUBLIC_BASE_URL=http://127.0.0.1:5173 (sessions check Origin).
    proxy: { '/v1': { target: api, changeOrigin: false }, '/docs': { target: api } },
  },
});
