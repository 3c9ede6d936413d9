import { useState, type ReactNode } from 'react';
import { api } from './api';
import { Link, navigate, useLocation } from './router';
import { useSession } from './session';
import { ErrorNotice } from './ui';

const NAV: { to: string; label: string; ownerOnly?: boolean }[] = [
  { to: '/', label: 'Overview' },
  { to: '/billing', label: 'Billing' },
  { to: '/keys', label: 'API keys' },
  { to: '/jobs', label: 'Jobs' },
  { to: '/jobs/new', label: 'New job' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/licenses', label: 'Licences' },
  { to: '/settings', label: 'Settings', ownerOnly: true },
];

function isCurrent(to: string, path: string): boolean {
  if (to === '/') return path === '/';
  if (to === '/jobs') return path === '/jobs' || (path.startsWith('/jobs/') && path !== '/jobs/new');
  return path === to || path.startsWith(`${to}/`);
}

/** The signed-in frame: navigation, who is signed in to which account, signing out. */
export function Layout({ children }: { children: ReactNode }) {
  const { session, setSession } = useSession();
  const { path } = useLocation();
  const [error, setError] = useState<unknown>(null);

  const signOut = async (everywhere: boolean) => {
    try {
      await api('DELETE', everywhere ? '/v1/sessions' : '/v1/sessions/current');
    } catch (failure) {
      setError(failure);
      return;
    }
    setSession(null);
    navigate('/login?signed_out=1', { replace: true });
  };

  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">mediajobs</span>
        <span className="account">
          {session.account.name} <span className="muted">· {session.account.plan} plan</span>
        </span>
        <span className="who">
          {session.member.email} <span className="muted">({session.member.role})</span>
        </span>
        <button type="button" onClick={() => void signOut(false)}>
          Sign out
        </button>
        <button type="button" onClick={() => void signOut(true)}>
          Sign out everywhere
        </button>
      </header>
      <nav className="sidebar" aria-label="Dashboard">
        <ul>
          {NAV.filter((item) => !item.ownerOnly || session.member.role === 'owner').map((item) => (
            <li key={item.to}>
              <Link to={item.to} aria-current={isCurrent(item.to, path) ? 'page' : undefined}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
        <p className="sidebar-links">
          <a href="/docs" target="_blank" rel="noreferrer">
            API reference
          </a>
          <a href="/docs/errors.html" target="_blank" rel="noreferrer">
            Error codes
          </a>
        </p>
      </nav>
      <main id="main" className="content">
        {session.account.status === 'suspended' && (
          <div className="notice notice-warning" role="status">
            This account is suspended: requests answer <code>account_suspended</code>. Contact support to restore it.
          </div>
        )}
        {error ? <ErrorNotice error={error} /> : null}
        {children}
      </main>
    </div>
  );
}
