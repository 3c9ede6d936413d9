// A small history-API router: the app has a dozen routes and needs no more than matching paths,
// links and navigation (a router package would add weight for nothing).
import { createContext, useContext, useEffect, useState, type AnchorHTMLAttributes, type ReactNode } from 'react';

export const BASE = '/dashboard';

interface Location {
  path: string;
  search: URLSearchParams;
  hash: string;
}

function current(): Location {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) || '/' : '/';
  return {
    path: path.replace(/\/+$/, '') || '/',
    search: new URLSearchParams(window.location.search),
    hash: window.location.hash,
  };
}

const LocationContext = createContext<Location>(current());
const listeners = new Set<() => void>();

/** Goes to `to` (a path under /dashboard, e.g. `/jobs?status=failed`). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to === '/' ? '/' : to}`;
  if (options.replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

export function RouterProvider({ children }: { children: ReactNode }) {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return <LocationContext.Provider value={location}>{children}</LocationContext.Provider>;
}

export function useLocation(): Location {
  return useContext(LocationContext);
}

/** `/jobs/:api/:id` against `/jobs/sdr2hdr/job_1` → `{api: 'sdr2hdr', id: 'job_1'}`; null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const wanted = pattern.split('/');
  const parts = path.split('/');
  if (wanted.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (const [index, segment] of wanted.entries()) {
    if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(parts[index]);
    else if (segment !== parts[index]) return null;
  }
  return params;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link({ to, children, onClick, ...rest }: LinkProps) {
  return (
    <a
      href={`${BASE}${to}`}
      onClick={(event) => {
        onClick?.(event);
        if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
        event.preventDefault();
        navigate(to);
      }}
      {...rest}
    >
      {children}
    </a>
  );
}

/** Navigates once mounted (never during a render). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
