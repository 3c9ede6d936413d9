import { useEffect, useState, type ReactNode } from 'react';
import { api, ApiFailure, onSessionEnded, setCsrfToken, type Session } from './api';
import { Layout } from './layout';
import { ForgotPasswordPage, SetPasswordPage, SignInPage } from './pages/auth';
import { BillingPage } from './pages/billing';
import { JobLookup, JobPage } from './pages/job';
import { JobsPage } from './pages/jobs';
import { KeysPage } from './pages/keys';
import { LicensesPage } from './pages/licenses';
import { NewJobPage } from './pages/new-job';
import { OverviewPage } from './pages/overview';
import { SettingsPage } from './pages/settings';
import { WebhookPage, WebhooksPage } from './pages/webhooks';
import { match, navigate, Redirect, useLocation } from './router';
import { SessionProvider } from './session';
import { ErrorNotice, Loading, PageTitle } from './ui';

/** Pages a person reaches without a session. */
const PUBLIC_PAGES: Record<string, (props: { onSignedIn: (session: Session) => void }) => ReactNode> = {
  '/login': SignInPage,
  '/forgot-password': ForgotPasswordPage,
  '/set-password': SetPasswordPage,
};

function signedInPage(path: string): ReactNode {
  if (path === '/') return <OverviewPage />;
  if (path === '/keys') return <KeysPage />;
  if (path === '/billing') return <BillingPage />;
  if (path === '/jobs') return <JobsPage />;
  if (path === '/jobs/new') return <NewJobPage />;
  const job = match('/jobs/:api/:id', path);
  if (job && (job.api === 'sdr2hdr' || job.api === 'audio')) return <JobPage api={job.api} id={job.id} />;
  // A job known only by its id (the ledger's links): found under either API, then shown at its address.
  const anyJob = match('/jobs/:id', path);
  if (anyJob?.id.startsWith('job_')) return <JobLookup id={anyJob.id} />;
  if (path === '/webhooks') return <WebhooksPage />;
  const endpoint = match('/webhooks/:id', path);
  if (endpoint) return <WebhookPage id={endpoint.id} />;
  if (path === '/licenses') return <LicensesPage />;
  if (path === '/settings') return <SettingsPage />;
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>There is no dashboard page at this address. Pick one from the menu.</p>
    </>
  );
}

export function App() {
  const { path } = useLocation();
  const [session, setSessionState] = useState<Session | null>(null);
  const [checked, setChecked] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const setSession = (next: Session | null) => {
    setCsrfToken(next?.csrf_token ?? null);
    setSessionState(next);
    // While signed in, a request that finds the session over leads back to the sign-in page.
    onSessionEnded(
      next
        ? () => {
            setSession(null);
            const here = window.location.pathname.replace(/^\/dashboard/, '') + window.location.search;
            navigate(`/login?ended=1&next=${encodeURIComponent(here || '/')}`, { replace: true });
          }
        : null,
    );
  };

  useEffect(() => {
    api<Session>('GET', '/v1/sessions/current')
      .then((current) => setSession(current))
      .catch((failure: unknown) => {
        // Not signed in is the normal case for a first visit; anything else is worth showing.
        if (!(failure instanceof ApiFailure && failure.status === 401)) setError(failure);
      })
      .finally(() => setChecked(true));
  }, []);

  const PublicPage = PUBLIC_PAGES[path];
  if (PublicPage) {
    return (
      <main id="main" className="public">
        <PublicPage
          onSignedIn={(signedIn) => {
            setSession(signedIn);
            const next = new URLSearchParams(window.location.search).get('next');
            navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
          }}
        />
      </main>
    );
  }
  if (!checked) {
    return (
      <main id="main" className="public">
        <Loading what="your session" />
      </main>
    );
  }
  if (!session) {
    if (error) {
      return (
        <main id="main" className="public">
          <ErrorNotice error={error} />
        </main>
      );
    }
    const here = window.location.pathname.replace(/^\/dashboard/, '') + window.location.search;
    return <Redirect to={`/login?next=${encodeURIComponent(here || '/')}`} />;
  }
  return (
    <SessionProvider value={{ session, setSession }}>
      <Layout>{signedInPage(path)}</Layout>
    </SessionProvider>
  );
}
